package sqlite

import (
	"context"
	"reflect"
	"testing"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func TestUsageLedger(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t)
		return s
	})
}

// A database at schema 9 gains the session cost columns (0 for its
// sessions) and the usage ledger.
func TestMigrationAddsCosts(t *testing.T) {
	ctx := context.Background()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t"}
	path := createAtSchema(t, 9, store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "kept"})
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open with migration 10: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if got, err := s.GetSession(ctx, k); err != nil || got.Title != "kept" || got.Stats.CostNanos != 0 || got.Stats.UnpricedCalls != 0 {
		t.Fatalf("session after migration: %+v, %v", got, err)
	}
	if err := s.AddTurnStats(ctx, k, store.TurnStats{CostNanos: 42, UnpricedCalls: 1}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(ctx, k); err != nil || got.Stats.CostNanos != 42 || got.Stats.UnpricedCalls != 1 {
		t.Fatalf("session cost after a turn: %+v, %v", got, err)
	}
	uk := store.UsageKey{UserID: "alice", Day: "2026-12-04", Model: "m"}
	if err := s.AddUsage(ctx, uk, store.Usage{LLMCalls: 1, CostNanos: 42}); err != nil {
		t.Fatal(err)
	}
	if rows, err := s.ListUsage(ctx, "alice", "2026-12-04", "2026-12-04"); err != nil || len(rows) != 1 || rows[0].CostNanos != 42 {
		t.Fatalf("ledger after migration: %+v, %v", rows, err)
	}
}

func TestMergeUsage(t *testing.T) {
	k1 := store.UsageKey{UserID: "alice", Day: "2026-12-04", Model: "m"}
	k2 := store.UsageKey{UserID: "alice", Day: "2026-12-04", Model: "m", ProjectID: "p", SessionID: "s"}
	k3 := store.UsageKey{UserID: "bob", Day: "2026-12-04", Model: "m"}
	u := func(calls, in, out int64) store.Usage {
		return store.Usage{LLMCalls: calls, InputTokens: in, OutputTokens: out, CostNanos: 10 * in}
	}
	cases := []struct {
		name  string
		batch []usageAdd
		want  []usageAdd
	}{
		{"empty", nil, nil},
		{"one", []usageAdd{{k1, u(1, 5, 2)}}, []usageAdd{{k1, u(1, 5, 2)}}},
		{"distinct keys keep their order", []usageAdd{{k2, u(1, 5, 2)}, {k1, u(1, 3, 1)}, {k3, u(2, 1, 1)}},
			[]usageAdd{{k2, u(1, 5, 2)}, {k1, u(1, 3, 1)}, {k3, u(2, 1, 1)}}},
		{"a repeated key is summed at its first place", []usageAdd{{k1, u(1, 5, 2)}, {k3, u(1, 1, 1)}, {k1, u(2, 7, 3)}, {k1, u(1, 1, 1)}},
			[]usageAdd{{k1, u(4, 13, 6)}, {k3, u(1, 1, 1)}}},
	}
	for _, tc := range cases {
		if got := mergeUsage(tc.batch); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
