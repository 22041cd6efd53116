// Package usage answers questions of the usage ledger (store.UsageLedger):
// what a user, or one of their API keys, used and spent over a range of
// days, grouped by day, model, key or session. It is the domain below the
// HTTP routes that show it (package httpapi/usageapi and the /v1 gateway).
package usage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"agentchat/internal/pricing"
	"agentchat/internal/store"
)

// Groupings of a report.
const (
	ByDay     = "day"
	ByModel   = "model"
	ByKey     = "key"
	BySession = "session"
)

// Bounds of a query.
const (
	// DefaultDays is the range of a query without from: the last 30 days.
	DefaultDays = 30
	// MaxDays bounds the range of one query.
	MaxDays = 366
)

// QueryError is a query that cannot be answered as asked: the parameter
// at fault and a text that says why, for the person.
type QueryError struct{ Param, Message string }

// Error returns the message.
func (e *QueryError) Error() string { return e.Message }

func badQuery(param, format string, args ...any) error {
	return &QueryError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// Query asks for a report.
type Query struct {
	// UserID is whose usage it is.
	UserID string
	// From and To are the first and last days (UTC, store.DayLayout).
	From, To string
	// GroupBy is ByDay, ByModel, ByKey or BySession.
	GroupBy string
	// KeyID, when set, keeps the usage of that API key only.
	KeyID string
}

// ParseQuery checks the parameters of a query (from, to, group_by as a
// client sends them; empty: the defaults, the last DefaultDays days up to
// today, by day), today being now's day in UTC. A bad parameter is a
// *QueryError.
func ParseQuery(userID, from, to, groupBy string, now time.Time) (Query, error) {
	q := Query{UserID: userID, GroupBy: cmp.Or(groupBy, ByDay)}
	switch q.GroupBy {
	case ByDay, ByModel, ByKey, BySession:
	default:
		return Query{}, badQuery("group_by", "group_by must be day, model, key or session, got %q", groupBy)
	}
	end := now.UTC()
	if to != "" {
		t, err := time.Parse(store.DayLayout, to)
		if err != nil {
			return Query{}, badQuery("to", "to must be a day as YYYY-MM-DD, got %q", to)
		}
		end = t
	}
	start := end.AddDate(0, 0, -(DefaultDays - 1))
	if from != "" {
		t, err := time.Parse(store.DayLayout, from)
		if err != nil {
			return Query{}, badQuery("from", "from must be a day as YYYY-MM-DD, got %q", from)
		}
		start = t
	}
	q.From, q.To = start.Format(store.DayLayout), end.Format(store.DayLayout)
	if q.From > q.To {
		return Query{}, badQuery("from", "from (%s) is after to (%s)", q.From, q.To)
	}
	if days := int(end.Sub(start).Hours()/24) + 1; days > MaxDays {
		return Query{}, badQuery("from", "at most %d days at once, asked for %d", MaxDays, days)
	}
	return q, nil
}

// Totals are the counters of a group or of a whole report.
type Totals struct {
	LLMCalls          int64 `json:"llm_calls"`
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	TotalTokens       int64 `json:"total_tokens"`
	// CostUSD is what the priced calls cost; null when every call counted
	// was of a model without prices (unknown, not free).
	CostUSD *float64 `json:"cost_usd"`
	// UnpricedLLMCalls counts the calls whose cost is unknown.
	UnpricedLLMCalls int64 `json:"unpriced_llm_calls"`
	// CostNanos is CostUSD in nano-dollars, exact.
	CostNanos int64 `json:"cost_nanos"`
}

func totalsOf(u store.Usage) Totals {
	return Totals{
		LLMCalls: u.LLMCalls, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
		OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens,
		CostUSD: pricing.ReportedUSD(u.CostNanos, u.UnpricedCalls), UnpricedLLMCalls: u.UnpricedCalls, CostNanos: u.CostNanos,
	}
}

// Group is one line of a report: the value of its grouping and its totals.
type Group struct {
	// Day, Model, KeyID or ProjectID and SessionID: the one of the report's
	// grouping is set. An empty KeyID is usage not through an API key; an
	// empty SessionID, a stateless /v1 run.
	Day       string  `json:"day,omitempty"`
	Model     string  `json:"model,omitempty"`
	KeyID     *string `json:"key_id,omitempty"`
	ProjectID *string `json:"project_id,omitempty"`
	SessionID *string `json:"session_id,omitempty"`
	Totals
}

// Report is the answer to a Query.
type Report struct {
	Object  string  `json:"object"`
	UserID  string  `json:"user_id"`
	KeyID   string  `json:"key_id,omitempty"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	GroupBy string  `json:"group_by"`
	Total   Totals  `json:"total"`
	Data    []Group `json:"data"`
}

// Ask answers q from the ledger: one range read of the user's rows.
func Ask(ctx context.Context, l store.UsageLedger, q Query) (Report, error) {
	rows, err := l.ListUsage(ctx, q.UserID, q.From, q.To)
	if err != nil {
		return Report{}, fmt.Errorf("usage of user %s: %w", q.UserID, err)
	}
	return Summarize(q, rows), nil
}

// Summarize groups rows (of q's user and days) as q asks.
func Summarize(q Query, rows []store.UsageRow) Report {
	type gkey struct{ a, b string }
	sums := map[gkey]store.Usage{}
	var total store.Usage
	for _, r := range rows {
		if q.KeyID != "" && r.KeyID != q.KeyID {
			continue
		}
		var k gkey
		switch q.GroupBy {
		case ByDay:
			k.a = r.Day
		case ByModel:
			k.a = r.Model
		case ByKey:
			k.a = r.KeyID
		case BySession:
			k = gkey{r.ProjectID, r.SessionID}
		}
		sums[k] = sums[k].Add(r.Usage)
		total = total.Add(r.Usage)
	}
	keys := make([]gkey, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y gkey) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
	rep := Report{Object: "usage", UserID: q.UserID, KeyID: q.KeyID, From: q.From, To: q.To, GroupBy: q.GroupBy,
		Total: totalsOf(total), Data: make([]Group, 0, len(keys))}
	for _, k := range keys {
		g := Group{Totals: totalsOf(sums[k])}
		switch q.GroupBy {
		case ByDay:
			g.Day = k.a
		case ByModel:
			g.Model = k.a
		case ByKey:
			g.KeyID = &k.a
		case BySession:
			g.ProjectID, g.SessionID = &k.a, &k.b
		}
		rep.Data = append(rep.Data, g)
	}
	return rep
}
