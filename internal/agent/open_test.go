package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentchat/internal/store"
)

// callStore records the session and lease calls a turn makes before it
// runs, and can make the first GetSession or AcquireLease report a missing
// session (as when the session appears between two calls). It hides the
// one-write calls of the store it wraps (it has no Unwrap), so that
// store.OpenTurn composes the basic calls, as on DynamoDB.
type callStore struct {
	store.Store
	mu        sync.Mutex
	calls     []string
	getMiss   atomic.Int32 // GetSession calls still to answer ErrNotFound
	leaseMiss atomic.Int32 // AcquireLease calls still to answer ErrNotFound
}

func (c *callStore) record(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, name)
}

// took returns the calls recorded so far, sorted (parallel calls have no
// order), and forgets them.
func (c *callStore) took() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Sorted(slices.Values(c.calls))
	c.calls = nil
	return out
}

func (c *callStore) GetSession(ctx context.Context, k store.Key) (*store.Session, error) {
	c.record("GetSession")
	if c.getMiss.Add(-1) >= 0 {
		return nil, fmt.Errorf("session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	return c.Store.GetSession(ctx, k)
}

func (c *callStore) AcquireLease(ctx context.Context, k store.Key, owner string, ttl time.Duration) error {
	c.record("AcquireLease")
	if c.leaseMiss.Add(-1) >= 0 {
		return fmt.Errorf("session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	return c.Store.AcquireLease(ctx, k, owner, ttl)
}

func (c *callStore) CreateSession(ctx context.Context, s *store.Session) error {
	c.record("CreateSession")
	return c.Store.CreateSession(ctx, s)
}

func (c *callStore) CreateLeasedSession(ctx context.Context, s *store.Session, owner string, ttl time.Duration) error {
	c.record("CreateLeasedSession")
	return c.Store.CreateLeasedSession(ctx, s, owner, ttl)
}

func (c *callStore) ReleaseLease(ctx context.Context, k store.Key, owner string) error {
	c.record("ReleaseLease")
	return c.Store.ReleaseLease(ctx, k, owner)
}

// TestStartTurnStoreCalls checks which store calls StartTurn makes to open
// a session, and that the turn holds the lease afterwards.
func TestStartTurnStoreCalls(t *testing.T) {
	cases := []struct {
		name string
		// existing: the session exists before the turn (with owner's title).
		existing  bool
		noID      bool
		getMiss   int32
		leaseMiss int32
		// want is the sorted list of calls; nil means any (the order of
		// parallel calls decides them).
		want []string
		// wantOneOf lists the call lists allowed when the order of the
		// parallel calls decides between them.
		wantOneOf   [][]string
		wantCreated bool
	}{
		{name: "new without id", noID: true, want: []string{"CreateLeasedSession"}, wantCreated: true},
		{name: "new client-made id", want: []string{"AcquireLease", "CreateLeasedSession", "GetSession"}, wantCreated: true},
		{name: "existing", existing: true, want: []string{"AcquireLease", "GetSession"}},
		// The read misses the session that the lease finds: the session is
		// read again and the lease the parallel call took is kept. When the
		// read's miss comes back first, the creation is tried beside the
		// lease and reports ErrExists; when the lease's answer comes first,
		// nothing is created.
		{name: "appeared before the lease", existing: true, getMiss: 1, wantOneOf: [][]string{
			{"AcquireLease", "CreateLeasedSession", "GetSession", "GetSession"},
			{"AcquireLease", "GetSession", "GetSession"},
		}},
		// The lease misses the session that the read finds (or not yet):
		// either way the lease is taken again.
		{name: "appeared before the read", existing: true, leaseMiss: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := &callStore{}
			h := newHarness(t, nil, func(o *Options) {
				cs.Store = o.Store
				o.Store = cs
			})
			ctx := context.Background()
			k := newKey()
			if tc.existing {
				if err := h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: "Mine"}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.noID {
				k.ThreadID = ""
			}
			cs.took()
			cs.getMiss.Store(tc.getMiss)
			cs.leaseMiss.Store(tc.leaseMiss)

			tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "tester", Message: "hi"})
			if err != nil {
				t.Fatalf("StartTurn: %v", err)
			}
			// A new session is written beside the turn (createBeside).
			if err := tr.createErr(); err != nil {
				t.Fatalf("create: %v", err)
			}
			calls := cs.took()
			if tc.want != nil && !slices.Equal(calls, tc.want) {
				t.Errorf("store calls %v, want %v", calls, tc.want)
			}
			if tc.wantOneOf != nil && !slices.ContainsFunc(tc.wantOneOf, func(w []string) bool { return slices.Equal(calls, w) }) {
				t.Errorf("store calls %v, want one of %v", calls, tc.wantOneOf)
			}
			if slices.Contains(calls, "CreateSession") || slices.Contains(calls, "ReleaseLease") {
				t.Errorf("store calls %v: a plain create or a release", calls)
			}
			s := tr.Session()
			k = s.Key()
			if tr.created != tc.wantCreated {
				t.Errorf("created = %v, want %v", tr.created, tc.wantCreated)
			}
			if wantTitle := map[bool]string{true: "Mine", false: store.DefaultTitle}[tc.existing]; s.Title != wantTitle {
				t.Errorf("session title %q, want %q", s.Title, wantTitle)
			}
			if err := h.st.AcquireLease(ctx, k, "intruder", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
				t.Fatalf("AcquireLease by another owner during the turn = %v, want ErrLeaseHeld", err)
			}
			var ev events
			tr.Run(ctx, ev.add)
			checkEnd(t, ev, false)
			if n := len(h.messages(k)); n != 2 {
				t.Errorf("stored %d messages, want 2", n)
			}
			if err := h.st.AcquireLease(ctx, k, "next", time.Minute); err != nil {
				t.Errorf("AcquireLease after the turn = %v, want the lease released", err)
			}
		})
	}
}

// TestStartTurnOtherUsersThreadID: another user's thread id is not found,
// and the attempt leaves the owner's session and lease alone.
func TestStartTurnOtherUsersThreadID(t *testing.T) {
	cs := &callStore{}
	h := newHarness(t, nil, func(o *Options) {
		cs.Store = o.Store
		o.Store = cs
	})
	ctx := context.Background()
	k := newKey()
	if err := h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: "Mine"}); err != nil {
		t.Fatal(err)
	}
	other := k
	other.UserID = "someone-else"
	if _, err := h.rt.StartTurn(ctx, TurnRequest{Key: other, Message: "let me in"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("StartTurn on another user's thread id: err = %v, want ErrNotFound", err)
	}
	if calls := cs.took(); slices.Contains(calls, "CreateSession") {
		t.Errorf("store calls %v", calls)
	}
	if s := h.session(k); s.Title != "Mine" || s.UserID != k.UserID {
		t.Errorf("owner's session changed: %+v", s)
	}
	if err := h.st.AcquireLease(ctx, k, "owner", time.Minute); err != nil {
		t.Errorf("owner's AcquireLease after the attempt = %v, want the lease free", err)
	}
}

// TestConcurrentStartOnNewThreadID starts two turns at once on the same new
// client-made thread id: one creates the session and holds it, the other
// gets ErrLeaseHeld, whatever the interleaving.
func TestConcurrentStartOnNewThreadID(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	for range 20 {
		k := newKey()
		turns := make([]*Turn, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range turns {
			wg.Go(func() {
				turns[i], errs[i] = h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "tester", Message: fmt.Sprint("turn ", i)})
			})
		}
		wg.Wait()
		var won *Turn
		for i, err := range errs {
			switch {
			case err == nil && won != nil:
				t.Fatal("both turns started")
			case err == nil:
				won = turns[i]
			case !errors.Is(err, store.ErrLeaseHeld):
				t.Fatalf("StartTurn %d: %v, want nil or ErrLeaseHeld", i, err)
			}
		}
		if won == nil {
			t.Fatalf("no turn started: %v", errs)
		}
		var ev events
		won.Run(ctx, ev.add)
		checkEnd(t, ev, false)
		if n := len(h.messages(k)); n != 2 {
			t.Fatalf("stored %d messages, want 2", n)
		}
	}
}
