package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"agentchat/internal/store"
)

// OpenTurn's history comes from the cache while the session's history did
// not change, and from the file as soon as it did, through this Store or
// another one on the same file.
func TestOpenTurnHistoryCache(t *testing.T) {
	ctx := context.Background()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t"}
	type env struct {
		s, other *Store
		seq      *int
	}
	msg := func(e env, role string) store.Message {
		*e.seq++
		return store.Message{ID: fmt.Sprintf("m%d", *e.seq), Role: role, Content: fmt.Sprintf("text %d", *e.seq)}
	}
	contents := func(msgs []store.Message) []string {
		out := []string{}
		for _, m := range msgs {
			out = append(out, m.Content)
		}
		return out
	}
	// check runs OpenTurn on e.s and compares its history with ListMessages.
	check := func(t *testing.T, e env, what string, limit int) []store.Message {
		t.Helper()
		_, hist, err := e.s.OpenTurn(ctx, k, "turn", time.Minute, limit)
		if err != nil {
			t.Fatalf("%s: OpenTurn: %v", what, err)
		}
		if err := e.s.ReleaseLease(ctx, k, "turn"); err != nil {
			t.Fatal(err)
		}
		want, err := e.s.ListMessages(ctx, k, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(contents(hist), contents(want)) {
			t.Errorf("%s: OpenTurn history %v, ListMessages %v", what, contents(hist), contents(want))
		}
		return hist
	}
	appendTo := func(t *testing.T, s *Store, msgs ...store.Message) {
		t.Helper()
		if _, err := s.AppendMessages(ctx, k, msgs); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, e env)
	}{
		{"appends through the store extend it", func(t *testing.T, e env) {
			check(t, e, "first", 50)
			appendTo(t, e.s, msg(e, store.RoleUser), msg(e, store.RoleAssistant))
			check(t, e, "after an append", 50)
			if _, err := e.s.FinishTurn(ctx, k, "nobody", []store.Message{msg(e, store.RoleAssistant)}, store.TurnStats{}); err != nil {
				t.Fatal(err)
			}
			check(t, e, "after FinishTurn", 50)
		}},
		{"another store's append is seen", func(t *testing.T, e env) {
			check(t, e, "first", 50)
			appendTo(t, e.other, msg(e, store.RoleUser))
			check(t, e, "after the other store's append", 50)
		}},
		{"a session made anew by another store is seen", func(t *testing.T, e env) {
			check(t, e, "first", 50)
			if err := e.other.DeleteSession(ctx, k); err != nil {
				t.Fatal(err)
			}
			if err := e.other.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
				t.Fatal(err)
			}
			appendTo(t, e.other, msg(e, store.RoleUser), msg(e, store.RoleAssistant), msg(e, store.RoleUser))
			check(t, e, "after the session was made anew", 50)
		}},
		{"a longer window than the cached one is read", func(t *testing.T, e env) {
			check(t, e, "two", 2)
			check(t, e, "all", 0)
			check(t, e, "three", 3)
		}},
		{"callers do not share the cached messages", func(t *testing.T, e env) {
			hist := check(t, e, "first", 50)
			hist[0].Content = "changed by a caller"
			hist[0].Metadata = map[string]any{"x": 1}
			check(t, e, "after a caller changed its copy", 50)
		}},
		{"an unchanged history is not read again", func(t *testing.T, e env) {
			check(t, e, "first", 50)
			// Not a supported change (messages are append-only): it shows
			// that the rows are not read while the marker and the last id
			// stay the same.
			if _, err := e.s.w.ExecContext(ctx, `UPDATE messages SET content = 'rewritten' WHERE seq = 1`); err != nil {
				t.Fatal(err)
			}
			_, hist, err := e.s.OpenTurn(ctx, k, "turn", time.Minute, 50)
			if err != nil {
				t.Fatal(err)
			}
			if hist[0].Content == "rewritten" {
				t.Errorf("OpenTurn read the rows of an unchanged history")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openTemp(t)
			other, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = other.Close() })
			e := env{s: s, other: other, seq: new(int)}
			if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
				t.Fatal(err)
			}
			appendTo(t, s, msg(e, store.RoleUser), msg(e, store.RoleAssistant), msg(e, store.RoleUser), msg(e, store.RoleAssistant))
			tc.run(t, e)
		})
	}
}

// The cache stays within its bounds.
func TestHistoryCacheBounds(t *testing.T) {
	var c historyCache
	big := store.Message{ID: "m", Role: store.RoleUser, Content: string(make([]byte, 1<<20)), Seq: 1}
	for i := range maxCachedHistories + 20 {
		c.put(threadRef{project: "p", thread: fmt.Sprint(i)}, 1, []store.Message{big}, true)
		if len(c.entries) > maxCachedHistories || c.text > maxCachedHistoryText {
			t.Fatalf("after %d puts: %d sessions, %d bytes", i+1, len(c.entries), c.text)
		}
	}
	r := threadRef{project: "p", thread: "long"}
	c.put(r, 0, nil, true)
	for i := range maxCachedMessages + 10 {
		c.appended(r, []store.Message{{ID: fmt.Sprint(i), Role: store.RoleUser, Seq: int64(i + 1)}})
	}
	if e := c.entries[r]; e == nil || len(e.msgs) != maxCachedMessages || e.complete {
		t.Fatalf("long history: %+v", e)
	}
	if _, ok := c.lookup(r, maxCachedMessages+10, 0); ok {
		t.Error("a trimmed history answered a request for all messages")
	}
}
