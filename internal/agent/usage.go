package agent

import (
	"context"

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
