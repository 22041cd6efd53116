package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"agentchat/internal/store"
)

// A rollback never lets OpenTurn serve a cached history that holds the
// removed messages: the Store that rolls back drops its entry, and a Store
// on the same file (another process) whose entry holds them sees that the
// marker moved back, or that the message at the marker is another one
// once appends reach the same seq again.
func TestRollBackHistoryCache(t *testing.T) {
	ctx := context.Background()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t"}
	n := 0
	tagged := func(turn string, count int) []store.Message {
		var out []store.Message
		for range count {
			n++
			out = append(out, store.Message{ID: fmt.Sprintf("m%d", n), Role: store.RoleUser, Content: fmt.Sprintf("%s %d", turn, n),
				Metadata: map[string]any{store.MetadataTurnID: turn}})
		}
		return out
	}
	// history opens a turn on s and returns its history's contents.
	history := func(t *testing.T, s *Store) string {
		t.Helper()
		_, hist, err := s.OpenTurn(ctx, k, "reader", time.Minute, 50)
		if err != nil {
			t.Fatalf("OpenTurn: %v", err)
		}
		if err := s.ReleaseLease(ctx, k, "reader"); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range hist {
			out = append(out, m.Content)
		}
		return strings.Join(out, ",")
	}
	do := func(t *testing.T, what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	s, path := openTemp(t)
	other, err := Open(ctx, path)
	do(t, "Open", err)
	t.Cleanup(func() { _ = other.Close() })
	do(t, "CreateSession", s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}))
	_, err = s.AppendMessages(ctx, k, append(tagged("A", 2), tagged("B", 4)...))
	do(t, "append A and B", err)
	const withB = "A 1,A 2,B 3,B 4,B 5,B 6"

	// Rolled back through the caching Store: its entry is gone.
	if got := history(t, s); got != withB {
		t.Fatalf("history %q, want %q", got, withB)
	}
	removed, err := s.RollBackTurn(ctx, k, "B")
	do(t, "RollBackTurn(B)", err)
	if removed != 4 {
		t.Fatalf("RollBackTurn(B) removed %d, want 4", removed)
	}
	if _, ok := s.history.entries[threadRef{project: k.ProjectID, thread: k.ThreadID}]; ok {
		t.Errorf("the rollback left the session's history cache entry")
	}
	if got := history(t, s); got != "A 1,A 2" {
		t.Errorf("after the rollback: history %q, want %q", got, "A 1,A 2")
	}

	// Rolled back through another Store, and as many messages appended
	// there: the caching Store's marker matches, the last id does not.
	_, err = s.AppendMessages(ctx, k, tagged("B", 4))
	do(t, "append B again", err)
	const withB2 = "A 1,A 2,B 7,B 8,B 9,B 10"
	if got := history(t, s); got != withB2 {
		t.Fatalf("history %q, want %q", got, withB2)
	}
	removed, err = other.RollBackTurn(ctx, k, "B")
	do(t, "other RollBackTurn(B)", err)
	if removed != 4 {
		t.Fatalf("other RollBackTurn(B) removed %d, want 4", removed)
	}
	if got := history(t, s); got != "A 1,A 2" {
		t.Errorf("after the other Store's rollback: history %q, want %q", got, "A 1,A 2")
	}
	_, err = s.AppendMessages(ctx, k, tagged("B", 4))
	do(t, "append B a third time", err)
	if got := history(t, s); got != "A 1,A 2,B 11,B 12,B 13,B 14" {
		t.Fatalf("history %q", got)
	}
	_, err = other.RollBackTurn(ctx, k, "B")
	do(t, "other RollBackTurn(B) again", err)
	_, err = other.AppendMessages(ctx, k, tagged("C", 4))
	do(t, "other append C", err)
	if got, want := history(t, s), "A 1,A 2,C 15,C 16,C 17,C 18"; got != want {
		t.Errorf("after the other Store's rollback and append: history %q, want %q", got, want)
	}
}
