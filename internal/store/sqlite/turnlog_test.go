package sqlite

import (
	"testing"
	"time"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func TestTurnLogs(t *testing.T) {
	storetest.RunTurnLogs(t, func(t *testing.T) store.Store {
		c := new(storetest.Clock)
		s, _ := openTemp(t, WithClock(c.Now))
		return storetest.WithClock(s, c)
	})
}

// Expired rows are purged by an append, at most every turnLogPurgeEvery.
func TestTurnLogPurge(t *testing.T) {
	ctx := t.Context()
	c := new(storetest.Clock)
	s, _ := openTemp(t, WithClock(c.Now))
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t"}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	rows := func(turn string) int {
		t.Helper()
		var n int
		if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM turn_logs WHERE turn_id = ?`, turn).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	add := func(turn string, keep time.Duration) {
		t.Helper()
		if err := s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: turn, First: 1, Events: [][]byte{[]byte("x")}}, keep); err != nil {
			t.Fatal(err)
		}
	}
	add("a", time.Minute) // the first append purges (nothing yet)
	c.Advance(2 * time.Minute)
	add("b", time.Hour) // within turnLogPurgeEvery of the last purge
	if rows("a") != 1 {
		t.Fatalf("an expired row was purged %v after the last purge", 2*time.Minute)
	}
	c.Advance(turnLogPurgeEvery)
	add("c", time.Hour)
	if rows("a") != 0 || rows("b") != 1 || rows("c") != 1 {
		t.Fatalf("rows after a purge: a %d, b %d, c %d; want 0, 1, 1", rows("a"), rows("b"), rows("c"))
	}
}
