package sqlite

import (
	"context"
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
