package dynamo

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"agentchat/internal/store"
)

// The seq reserved with a lease spares the turn's first append its
// reservation, and it never holds up a later append: every way a turn
// ends, used or not, the next append (from another process, which knows
// nothing of it, with a stall timeout of an hour) goes through at once.
func TestLeaseSeq(t *testing.T) {
	msg := func(content string) store.Message { return store.Message{Role: store.RoleUser, Content: content} }
	cases := []struct {
		name string
		// turn runs on a session created with CreateSession (or, with
		// leased, with CreateLeasedSession for owner A).
		leased bool
		turn   func(t *testing.T, s *Store, k store.Key)
		// wantOps are the requests of the turn after its lease, when set.
		wantOps []string
		want    []string // the history after the turn
	}{
		{name: "user message at the lease's seq", want: []string{"q"}, wantOps: []string{"PutItem", "UpdateItem", "UpdateItem"},
			turn: func(t *testing.T, s *Store, k store.Key) {
				mustAppend(t, s, k, msg("q"))
				mustNoErr(t, s.ReleaseLease(t.Context(), k, "A"))
			}},
		{name: "leased creation", leased: true, want: []string{"q"}, wantOps: []string{"PutItem", "UpdateItem", "UpdateItem"},
			turn: func(t *testing.T, s *Store, k store.Key) {
				mustAppend(t, s, k, msg("q"))
				mustNoErr(t, s.ReleaseLease(t.Context(), k, "A"))
			}},
		{name: "nothing stored", wantOps: []string{"UpdateItem", "UpdateItem"},
			turn: func(t *testing.T, s *Store, k store.Key) { mustNoErr(t, s.ReleaseLease(t.Context(), k, "A")) }},
		{name: "several messages", want: []string{"q", "r"},
			turn: func(t *testing.T, s *Store, k store.Key) {
				mustAppend(t, s, k, msg("q"), msg("r"))
				mustNoErr(t, s.ReleaseLease(t.Context(), k, "A"))
			}},
		{name: "acquired again by its holder", want: []string{"q"},
			turn: func(t *testing.T, s *Store, k store.Key) {
				mustNoErr(t, s.AcquireLease(t.Context(), k, "A", time.Hour))
				mustAppend(t, s, k, msg("q"))
				mustNoErr(t, s.ReleaseLease(t.Context(), k, "A"))
			}},
		{name: "answer only, at the end", want: []string{"a"},
			turn: func(t *testing.T, s *Store, k store.Key) {
				_, err := s.FinishTurn(t.Context(), k, "A", []store.Message{{Role: store.RoleAssistant, Content: "a"}}, store.TurnStats{Turns: 1})
				mustNoErr(t, err)
			}},
		{name: "deleted and created again", want: []string{"q"},
			turn: func(t *testing.T, s *Store, k store.Key) {
				mustNoErr(t, s.DeleteSession(t.Context(), k))
				mustNoErr(t, s.CreateSession(t.Context(), &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}))
				mustAppend(t, s, k, msg("q"))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu  sync.Mutex
				ops []string
			)
			s := newHookedStore(t, "", func(op string) error {
				mu.Lock()
				defer mu.Unlock()
				ops = append(ops, op)
				return nil
			})
			ctx := t.Context()
			k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t-" + tc.name}
			sess := &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}
			if tc.leased {
				mustNoErr(t, s.CreateLeasedSession(ctx, sess, "A", time.Hour))
			} else {
				mustNoErr(t, s.CreateSession(ctx, sess))
				mustNoErr(t, s.AcquireLease(ctx, k, "A", time.Hour))
			}
			mu.Lock()
			ops = nil
			mu.Unlock()
			tc.turn(t, s, k)
			mu.Lock()
			got := slices.Clone(ops)
			mu.Unlock()
			if tc.wantOps != nil && !slices.Equal(got, tc.wantOps) {
				t.Errorf("requests %v, want %v", got, tc.wantOps)
			}

			// Another process appends next, with no patience for a
			// reserved seq left behind.
			other, err := New(ctx, Options{TableName: s.table, Endpoint: endpoint})
			mustNoErr(t, err)
			other.stallTimeout = time.Hour
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if _, err := other.AppendMessages(actx, k, []store.Message{msg("next")}); err != nil {
				t.Fatalf("the next append: %v (held up by a reserved seq?)", err)
			}
			list, err := other.ListMessages(ctx, k, 0)
			mustNoErr(t, err)
			if c := contents(list); !slices.Equal(c, append(slices.Clone(tc.want), "next")) {
				t.Errorf("history %q, want %q and next", c, tc.want)
			}
		})
	}
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustAppend(t *testing.T, s *Store, k store.Key, msgs ...store.Message) {
	t.Helper()
	if _, err := s.AppendMessages(t.Context(), k, msgs); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
}
