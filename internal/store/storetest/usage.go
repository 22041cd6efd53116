package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// RunUsage runs the conformance tests of store.UsageLedger against stores
// made by newStore.
func RunUsage(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("UsageAddAndRange", func(t *testing.T) { testUsageAddAndRange(t, newStore(t)) })
	t.Run("UsageConcurrent", func(t *testing.T) { testUsageConcurrent(t, newStore(t)) })
	t.Run("UsageBadKey", func(t *testing.T) { testUsageBadKey(t, newStore(t)) })
	t.Run("UsageSessionStats", func(t *testing.T) { testUsageSessionStats(t, newStore(t)) })
	t.Run("Budgets", func(t *testing.T) { testBudgets(t, newStore(t)) })
}

// testBudgets: a user's budget is set, replaced and removed; an API key's
// is set at creation and changed with its limits, and authentication
// reads it.
func testBudgets(t *testing.T, s store.Store) {
	ctx := context.Background()
	user := "u-" + uuid.NewString()
	if b, err := s.UserBudget(ctx, user); err != nil || b.Set() {
		t.Fatalf("budget of a new user: %+v, %v; want none", b, err)
	}
	for _, want := range []store.Budget{{MaxNanos: 5e9, Period: store.BudgetMonth}, {MaxNanos: 1, Period: store.BudgetTotal}, {}} {
		noErr(t, "set user budget", s.SetUserBudget(ctx, user, want))
		if got, err := s.UserBudget(ctx, user); err != nil || got != want {
			t.Fatalf("user budget = %+v, %v; want %+v", got, err, want)
		}
	}
	k := &store.APIKey{ID: uuid.NewString(), UserID: user, Name: "k", Hash: uuid.NewString(), Prefix: "ack_x",
		CreatedAt: time.Now().UTC().Truncate(time.Second), Limits: store.KeyLimits{RPM: 5, Budget: store.Budget{MaxNanos: 2e9, Period: store.BudgetDay}}}
	noErr(t, "create key", s.CreateAPIKey(ctx, k))
	got, err := s.APIKeyByHash(ctx, k.Hash)
	noErr(t, "by hash", err)
	if got.Limits != k.Limits {
		t.Fatalf("key limits at creation = %+v, want %+v", got.Limits, k.Limits)
	}
	for _, want := range []store.KeyLimits{{Budget: store.Budget{MaxNanos: 7, Period: store.BudgetMonth}}, {TPM: 9}} {
		noErr(t, "set key limits", s.SetAPIKeyLimits(ctx, user, k.ID, want))
		got, err := s.APIKeyByHash(ctx, k.Hash)
		noErr(t, "by hash", err)
		list, err := s.ListAPIKeys(ctx, user)
		noErr(t, "list keys", err)
		if got.Limits != want || len(list) != 1 || list[0].Limits != want {
			t.Fatalf("key limits = %+v (listed %+v), want %+v", got.Limits, list, want)
		}
	}
}

// testUsageAddAndRange: adds to one row sum; rows are apart by every part
// of the key (names with '#', '%' and '$' included); a day range returns
// those days' rows of that user only, in order.
func testUsageAddAndRange(t *testing.T, s store.Store) {
	ctx := context.Background()
	user, other := "u-"+uuid.NewString(), "u-"+uuid.NewString()
	one := store.Usage{LLMCalls: 1, InputTokens: 100, CachedInputTokens: 40, OutputTokens: 20, CostNanos: 123_456}
	k := func(day, model, key, project, session string) store.UsageKey {
		return store.UsageKey{UserID: user, Day: day, Model: model, KeyID: key, ProjectID: project, SessionID: session}
	}
	adds := []struct {
		k store.UsageKey
		d store.Usage
	}{
		{k("2026-11-30", "gpt-4o", "", "p1", "s1"), one},
		{k("2026-12-01", "gpt-4o", "", "p1", "s1"), one},
		{k("2026-12-01", "gpt-4o", "", "p1", "s1"), one},
		{k("2026-12-01", "gpt-4o", "key#1", "", ""), store.Usage{LLMCalls: 2, InputTokens: 7, OutputTokens: 3, UnpricedCalls: 2}},
		{k("2026-12-01", "a#b%c$", "", "p1", "s1"), one},
		{k("2026-12-02", "gpt-4o", "", "p#1", "s1"), one},
		{k("2026-12-03", "gpt-4o", "", "p1", "s1"), one},
		{store.UsageKey{UserID: other, Day: "2026-12-01", Model: "gpt-4o"}, one},
	}
	for _, a := range adds {
		noErr(t, "add usage", s.AddUsage(ctx, a.k, a.d))
	}
	got, err := s.ListUsage(ctx, user, "2026-12-01", "2026-12-02")
	noErr(t, "list usage", err)
	want := []store.UsageRow{
		{UsageKey: k("2026-12-01", "a#b%c$", "", "p1", "s1"), Usage: one},
		{UsageKey: k("2026-12-01", "gpt-4o", "", "p1", "s1"), Usage: one.Add(one)},
		{UsageKey: k("2026-12-01", "gpt-4o", "key#1", "", ""), Usage: store.Usage{LLMCalls: 2, InputTokens: 7, OutputTokens: 3, UnpricedCalls: 2}},
		{UsageKey: k("2026-12-02", "gpt-4o", "", "p#1", "s1"), Usage: one},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListUsage(2026-12-01..02) =\n%+v\nwant\n%+v", got, want)
	}
	if got, err := s.ListUsage(ctx, user, "2026-12-04", "2026-12-31"); err != nil || len(got) != 0 {
		t.Fatalf("ListUsage of days without usage = %+v, %v; want none", got, err)
	}
	if got, err := s.ListUsage(ctx, "u-"+uuid.NewString(), "2000-01-01", "2100-01-01"); err != nil || len(got) != 0 {
		t.Fatalf("ListUsage of a user without usage = %+v, %v; want none", got, err)
	}
	all, err := s.ListUsage(ctx, user, "2000-01-01", "2100-01-01")
	noErr(t, "list all usage", err)
	if len(all) != 6 {
		t.Fatalf("ListUsage of every day: %d rows, want 6: %+v", len(all), all)
	}
}

// testUsageConcurrent: concurrent adds to one row all count.
func testUsageConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	k := store.UsageKey{UserID: "u-" + uuid.NewString(), Day: "2026-12-04", Model: "m", KeyID: "k"}
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- s.AddUsage(ctx, k, store.Usage{LLMCalls: 1, OutputTokens: 5, CostNanos: 1000}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		noErr(t, "add usage", err)
	}
	got, err := s.ListUsage(ctx, k.UserID, k.Day, k.Day)
	noErr(t, "list usage", err)
	want := []store.UsageRow{{UsageKey: k, Usage: store.Usage{LLMCalls: n, OutputTokens: 5 * n, CostNanos: 1000 * n}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after %d concurrent adds: %+v, want %+v", n, got, want)
	}
}

// testUsageBadKey: a key without a user, a model or a valid day is
// refused and writes nothing.
func testUsageBadKey(t *testing.T, s store.Store) {
	ctx := context.Background()
	user := "u-" + uuid.NewString()
	for i, k := range []store.UsageKey{
		{Day: "2026-12-04", Model: "m"},
		{UserID: user, Day: "2026-12-04"},
		{UserID: user, Day: "04/12/2026", Model: "m"},
		{UserID: user, Model: "m"},
	} {
		if err := s.AddUsage(ctx, k, store.Usage{LLMCalls: 1}); !errors.Is(err, store.ErrBadUsageKey) {
			t.Errorf("AddUsage(%d: %+v) = %v, want ErrBadUsageKey", i, k, err)
		}
	}
	if got, err := s.ListUsage(ctx, user, "0000-01-01", "9999-12-31"); err != nil || len(got) != 0 {
		t.Fatalf("after refused adds: %+v, %v; want none", got, err)
	}
}

// testUsageSessionStats: a turn's cost and its unpriced calls add to the
// session's statistics, by AddTurnStats and by FinishTurn.
func testUsageSessionStats(t *testing.T, s store.Store) {
	ctx := context.Background()
	sess := &store.Session{ProjectID: "p-" + uuid.NewString(), UserID: "u-" + uuid.NewString(), ThreadID: uuid.NewString()}
	noErr(t, "create", s.CreateSession(ctx, sess))
	k := sess.Key()
	noErr(t, "add stats", s.AddTurnStats(ctx, k, store.TurnStats{Turns: 1, LLMCalls: 2, CostNanos: 2_500_000, UnpricedCalls: 1}))
	owner := "turn-" + uuid.NewString()
	if _, err := store.OpenTurn(ctx, s, store.TurnOpening{Key: k, Owner: owner, TTL: time.Hour}); err != nil {
		t.Fatalf("open turn: %v", err)
	}
	if _, err := store.FinishTurn(ctx, s, k, owner, nil, store.TurnStats{Turns: 1, CostNanos: 500_001}); err != nil {
		t.Fatalf("finish turn: %v", err)
	}
	got, err := s.GetSession(ctx, k)
	noErr(t, "get", err)
	if got.Stats.CostNanos != 3_000_001 || got.Stats.UnpricedCalls != 1 {
		t.Fatalf("session cost %d nanos, %d unpriced calls; want 3000001 and 1", got.Stats.CostNanos, got.Stats.UnpricedCalls)
	}
}
