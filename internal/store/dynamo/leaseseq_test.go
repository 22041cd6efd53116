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

// A lease that the creating turn sent beside the creation (store's composed
// opening) and that lands after it reserves a second seq: the turn's
// question takes the first, its end voids the second, and the next append
// is not held up (it was, for the stall timeout, when the second seq
// replaced the first).
func TestLeaseSeqOfALeaseLandingAfterTheCreation(t *testing.T) {
	reached, created := make(chan struct{}), make(chan struct{})
	var blockOnce sync.Once
	s := newObservedStore(t, "", func(op string, in any) error {
		if op == "UpdateItem" {
			blockOnce.Do(func() { close(reached); <-created }) // the lease's update, held until the creation is done
		}
		return nil
	}, nil)
	s.stallTimeout = time.Hour // a seq left unused would hold the turn's own appends
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "late-lease"}
	leased := make(chan error, 1)
	go func() { leased <- s.AcquireLease(ctx, k, "A", time.Hour) }()
	// The lease's request is under way (its reservation decided, none
	// held) before the creation starts: the hook holds it.
	<-reached
	mustNoErr(t, s.CreateLeasedSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}, "A", time.Hour))
	close(created)
	mustNoErr(t, <-leased)

	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "q"}}); err != nil {
		t.Fatalf("the question's append: %v (held up by a reserved seq?)", err)
	}
	_, err := s.FinishTurn(ctx, k, "A", []store.Message{{Role: store.RoleAssistant, Content: "a"}}, store.TurnStats{Turns: 1, Messages: 2})
	mustNoErr(t, err)

	other, err := New(ctx, Options{TableName: s.table, Endpoint: endpoint})
	mustNoErr(t, err)
	other.stallTimeout = time.Hour
	if _, err := other.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "next"}}); err != nil {
		t.Fatalf("the next append: %v (held up by a reserved seq?)", err)
	}
	list, err := other.ListMessages(ctx, k, 0)
	mustNoErr(t, err)
	if c := contents(list); !slices.Equal(c, []string{"q", "a", "next"}) {
		t.Errorf("history %q, want q, a, next", c)
	}
}
