package store

import (
	"cmp"
	"context"
	"errors"
	"time"
)

// DayLayout is the layout of a ledger day (UTC).
const DayLayout = "2006-01-02"

// UsageKey names one row of the usage ledger: what one user used on one
// day (UTC) with one model, through one API key (empty: not through a
// key), in one session (empty project and session: a stateless /v1 run).
type UsageKey struct {
	UserID    string
	Day       string // DayLayout
	Model     string
	KeyID     string
	ProjectID string
	SessionID string
}

// Compare orders keys by user, day, model, key, project and session.
func (k UsageKey) Compare(o UsageKey) int {
	return cmp.Or(cmp.Compare(k.UserID, o.UserID), cmp.Compare(k.Day, o.Day), cmp.Compare(k.Model, o.Model),
		cmp.Compare(k.KeyID, o.KeyID), cmp.Compare(k.ProjectID, o.ProjectID), cmp.Compare(k.SessionID, o.SessionID))
}

// Usage are the counters of a ledger row; a delta to add, or a sum.
type Usage struct {
	LLMCalls          int64
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	// CostNanos is the cost of the priced calls, in nano-dollars.
	CostNanos int64
	// UnpricedCalls counts the calls of a model without prices: their
	// cost is unknown (never counted as zero).
	UnpricedCalls int64
}

// Add returns u plus d.
func (u Usage) Add(d Usage) Usage {
	return Usage{
		LLMCalls: u.LLMCalls + d.LLMCalls, InputTokens: u.InputTokens + d.InputTokens,
		CachedInputTokens: u.CachedInputTokens + d.CachedInputTokens, OutputTokens: u.OutputTokens + d.OutputTokens,
		CostNanos: u.CostNanos + d.CostNanos, UnpricedCalls: u.UnpricedCalls + d.UnpricedCalls,
	}
}

// IsZero reports whether u counts nothing.
func (u Usage) IsZero() bool { return u == Usage{} }

// UsageRow is one row of the ledger.
type UsageRow struct {
	UsageKey
	Usage
}

// ErrBadUsageKey is the error of AddUsage with a key without a user, a
// valid day or a model.
var ErrBadUsageKey = errors.New("usage key needs a user, a day and a model")

// Check returns ErrBadUsageKey when k cannot be stored.
func (k UsageKey) Check() error {
	if k.UserID == "" || k.Model == "" {
		return ErrBadUsageKey
	}
	if _, err := time.Parse(DayLayout, k.Day); err != nil {
		return ErrBadUsageKey
	}
	return nil
}

// UsageLedger is the per-user, per-day, per-model, per-key, per-session
// record of what the LLM calls used and cost. It outlives the sessions it
// names (a deleted session's usage stays billed).
type UsageLedger interface {
	// AddUsage adds d to the row of k (created when missing), atomically:
	// concurrent adds from any instance all count. ErrBadUsageKey for a
	// key without a user, a day or a model.
	AddUsage(ctx context.Context, k UsageKey, d Usage) error
	// ListUsage returns the user's rows of the days from fromDay to toDay
	// (DayLayout, both included), ordered by day, then model, key,
	// project and session. It reads the user's rows only, never the
	// whole table.
	ListUsage(ctx context.Context, userID, fromDay, toDay string) ([]UsageRow, error)
}
