// Package budget checks the spending limits of users and API keys
// (store.Budget) against the usage ledger: how much of the tightest
// budget that applies to a turn is left, and the error of a budget spent.
// A budget counts the priced LLM calls only: the cost of a model without
// prices is unknown (see package pricing).
package budget

import (
	"context"
	"fmt"
	"time"

	"agentchat/internal/pricing"
	"agentchat/internal/store"
)

// Whose budget a Limit or an ExceededError is.
const (
	OfUser = "user"
	OfKey  = "key"
)

// Limit is the tightest budget that applies to a turn; the zero value is
// none.
type Limit struct {
	// Set is true when a budget applies.
	Set bool
	// LeftNanos is what is left of it, in nano-dollars (> 0).
	LeftNanos int64
	// Of says whose budget it is (OfUser, OfKey), Budget which it is, and
	// SpentNanos what its period had spent when the turn started.
	Of         string
	Budget     store.Budget
	SpentNanos int64
}

// Exceeded returns the error of this budget once a turn spent cost
// nano-dollars of it.
func (l Limit) Exceeded(cost int64) *ExceededError {
	return &ExceededError{Of: l.Of, Budget: l.Budget, SpentNanos: l.SpentNanos + cost}
}

// ExceededError is a budget that is spent.
type ExceededError struct {
	Of         string
	Budget     store.Budget
	SpentNanos int64
}

// Error says which budget is spent, for the person: the amount, the
// period and what was spent.
func (e *ExceededError) Error() string {
	whose := "Your"
	if e.Of == OfKey {
		whose = "This API key's"
	}
	w := periodWordsOf(e.Budget.Period)
	return fmt.Sprintf("%s%s budget of $%s is spent ($%s used%s).%s", whose, w.adjective,
		dollars(e.Budget.MaxNanos), dollars(e.SpentNanos), w.since, w.renews)
}

// periodWords are the words of a budget period in a message.
type periodWords struct{ adjective, since, renews string }

func periodWordsOf(period string) periodWords {
	switch period {
	case store.BudgetDay:
		return periodWords{" daily", " today, UTC", " It renews at midnight UTC."}
	case store.BudgetMonth:
		return periodWords{" monthly", " this month, UTC", " It renews on the first day of next month (UTC)."}
	}
	return periodWords{}
}

// dollars formats nano-dollars with at least two decimals, at most six.
func dollars(n int64) string {
	s := fmt.Sprintf("%.6f", pricing.USD(n))
	for len(s) > 0 && s[len(s)-1] == '0' && s[len(s)-3] != '.' {
		s = s[:len(s)-1]
	}
	return s
}

// Window returns the days (store.DayLayout, UTC) a budget of period counts
// at now: today, this month so far, or every day.
func Window(period string, now time.Time) (from, to string) {
	now = now.UTC()
	to = now.Format(store.DayLayout)
	switch period {
	case store.BudgetDay:
		return to, to
	case store.BudgetMonth:
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(store.DayLayout), to
	}
	return "0000-01-01", to
}

// Store is what a Checker reads.
type Store interface {
	store.UsageLedger
	store.UserBudgets
}

// Checker checks budgets against the ledger of its store.
type Checker struct {
	Store Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Left returns the tightest of the user's budget and the key's (keyID,
// with key its budget as authentication read it) with what is left of
// it, the zero Limit when neither is set, or an *ExceededError when one
// is spent. Cost: the user's budget read, and one range read of the
// user's ledger when a budget is set.
func (c Checker) Left(ctx context.Context, userID, keyID string, key store.Budget) (Limit, error) {
	user, err := c.Store.UserBudget(ctx, userID)
	if err != nil {
		return Limit{}, fmt.Errorf("check budgets: %w", err)
	}
	if keyID == "" {
		key = store.Budget{}
	}
	if !user.Set() && !key.Set() {
		return Limit{}, nil
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	type budget struct {
		of       string
		b        store.Budget
		keyID    string // the key whose spend counts; "" every key
		from, to string
		spent    int64
	}
	var bs []budget
	first := ""
	for _, x := range []struct {
		of, keyID string
		b         store.Budget
	}{{OfUser, "", user}, {OfKey, keyID, key}} {
		if !x.b.Set() {
			continue
		}
		from, to := Window(x.b.Period, now)
		bs = append(bs, budget{of: x.of, b: x.b, keyID: x.keyID, from: from, to: to})
		if first == "" || from < first {
			first = from
		}
	}
	rows, err := c.Store.ListUsage(ctx, userID, first, now.UTC().Format(store.DayLayout))
	if err != nil {
		return Limit{}, fmt.Errorf("check budgets: %w", err)
	}
	for i := range bs {
		bs[i].spent = spentIn(rows, bs[i].from, bs[i].to, bs[i].keyID)
	}
	var tightest Limit
	for _, b := range bs {
		if b.spent >= b.b.MaxNanos {
			return Limit{}, &ExceededError{Of: b.of, Budget: b.b, SpentNanos: b.spent}
		}
		if left := b.b.MaxNanos - b.spent; !tightest.Set || left < tightest.LeftNanos {
			tightest = Limit{Set: true, LeftNanos: left, Of: b.of, Budget: b.b, SpentNanos: b.spent}
		}
	}
	return tightest, nil
}

// spentIn sums the cost of the rows of the days from to to, of keyID's
// only when it is set.
func spentIn(rows []store.UsageRow, from, to, keyID string) int64 {
	var spent int64
	for _, r := range rows {
		if r.Day >= from && r.Day <= to && (keyID == "" || r.KeyID == keyID) {
			spent += r.CostNanos
		}
	}
	return spent
}

// Spent returns the days a budget of period counts at now and what the
// user's priced calls cost in them: one range read of the ledger.
func Spent(ctx context.Context, l store.UsageLedger, userID, period string, now time.Time) (from, to string, nanos int64, err error) {
	from, to = Window(period, now)
	rows, err := l.ListUsage(ctx, userID, from, to)
	if err != nil {
		return "", "", 0, fmt.Errorf("spent by user %s: %w", userID, err)
	}
	return from, to, spentIn(rows, from, to, ""), nil
}
