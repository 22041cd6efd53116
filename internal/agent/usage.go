package agent

import (
	"context"

	"agentchat/internal/budget"
	"agentchat/internal/store"
)

// ledgerModelUnknown is the ledger's model of a client that names none.
const ledgerModelUnknown = "(unknown)"

// recordUsage adds what a run used (t) to the usage ledger, under the
// user, the day (UTC), the configured model, the API key and the session
// of k, when the run made LLM calls and there is a store. A failure is
// logged: the answer is not taken back for it.
func (r *Runtime) recordUsage(ctx context.Context, k store.UsageKey, t tally) {
	if r.o.Store == nil || k.UserID == "" || t.llmCalls == 0 {
		return
	}
	k.Day = r.o.Now().UTC().Format(store.DayLayout)
	if k.Model == "" {
		k.Model = ledgerModelUnknown
	}
	err := r.o.Store.AddUsage(ctx, k, store.Usage{
		LLMCalls: t.llmCalls, InputTokens: int64(t.usage.PromptTokens), CachedInputTokens: int64(t.usage.CachedTokens),
		OutputTokens: int64(t.usage.CompletionTokens), CostNanos: t.costNanos, UnpricedCalls: t.unpriced,
	})
	if err != nil {
		r.log.ErrorContext(ctx, "record usage in the ledger", "user", k.UserID, "session", k.SessionID, "err", err)
	}
}

// startBudget starts the check of the budgets of a turn of userID through
// keyID (key: its budget) beside the turn's other calls; its wait returns
// the tightest budget and what is left of it (the zero Limit: none), or
// an error wrapping a *budget.ExceededError when one is spent.
func (r *Runtime) startBudget(ctx context.Context, userID, keyID string, key store.Budget) func() (budget.Limit, error) {
	if r.o.Budgets == nil {
		return func() (budget.Limit, error) { return budget.Limit{}, nil }
	}
	type answer struct {
		l   budget.Limit
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		l, err := r.o.Budgets.Left(ctx, userID, keyID, key)
		ch <- answer{l, err}
	}()
	return func() (budget.Limit, error) {
		a := <-ch
		return a.l, a.err
	}
}

// overBudget reports whether the run spent what was left of its budget.
func (l *loop) overBudget() bool {
	if !l.budget.Set {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used.costNanos >= l.budget.LeftNanos
}

// budgetStop is the error of a run stopped by its budget after an LLM
// call that crossed it.
func (l *loop) budgetStop() error {
	l.mu.Lock()
	cost := l.used.costNanos
	l.mu.Unlock()
	e := l.budget.Exceeded(cost)
	return &userError{msg: e.Error() + " The answer was stopped after its last model call.", err: e}
}
