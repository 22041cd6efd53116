package agent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

// holder is a run kept going (its LLM call hangs) until stop.
type holder struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the run and waits until it returned.
func (h *holder) stop() {
	h.cancel()
	<-h.done
}

// hold starts a turn (stateless: a stateless run) of user whose LLM call
// hangs after its first chunk, and returns once the run emitted an event:
// it then holds one of the user's turn slots.
func (h *harness) hold(t *testing.T, user string, stateless bool) *holder {
	t.Helper()
	k := newKey()
	k.UserID = user
	return h.holdSession(t, k, stateless)
}

// holdSession is hold on the session k (a stateless run: of k's user).
func (h *harness) holdSession(t *testing.T, k store.Key, stateless bool) *holder {
	t.Helper()
	user := k.UserID
	h.llm.Enqueue(llmtest.Reply{Text: "thinking about it", Hang: true, HangAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	ho := &holder{cancel: cancel, done: make(chan struct{})}
	started := make(chan struct{})
	var once sync.Once
	emit := func(Event) { once.Do(func() { close(started) }) }
	errc := make(chan error, 1)
	go func() {
		defer close(ho.done)
		if stateless {
			_, err := h.rt.RunStateless(ctx, StatelessRequest{AgentID: "tester", Messages: userMsgs("hold"), UserID: user}, emit)
			errc <- err
			return
		}
		tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "tester", Message: "hold"})
		errc <- err
		if err == nil {
			tr.Run(ctx, emit)
		}
	}()
	select {
	case <-started:
	case err := <-errc:
		if err != nil {
			cancel()
			t.Fatalf("holding run of %s: %v", user, err)
		}
		<-started
	}
	t.Cleanup(ho.stop)
	return ho
}

// wantFull asserts a refusal for the cap of n turns at once.
func wantFull(t *testing.T, what string, err error, n int) {
	t.Helper()
	var full *store.TurnSlotsFullError
	if !errors.As(err, &full) || !errors.Is(err, store.ErrTurnSlotsFull) || full.Slots != n {
		t.Fatalf("%s = %v, want a *store.TurnSlotsFullError for %d slots", what, err, n)
	}
}

// tryTurn starts and runs a turn of user on a new session; it returns the
// StartTurn error.
func (h *harness) tryTurn(user string) error {
	k := newKey()
	k.UserID = user
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "hi"})
	if err != nil {
		return err
	}
	tr.Run(context.Background(), func(Event) {})
	return nil
}

// tryStateless runs a stateless run of user; it returns its error.
func (h *harness) tryStateless(user string) error {
	_, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("hi"), UserID: user}, func(Event) {})
	return err
}

// TestTurnCapCountsBothKinds: project chat turns and stateless runs of a
// user share one cap; the next of either kind is refused with the cap,
// another user's are not, and a slot frees when its run ends.
func TestTurnCapCountsBothKinds(t *testing.T) {
	h := newHarness(t, nil, func(o *Options) { o.MaxTurnsPerUser = 2 })
	a := h.hold(t, "alice", false)
	h.hold(t, "alice", true)

	wantFull(t, "StartTurn beyond the cap", h.tryTurn("alice"), 2)
	wantFull(t, "RunStateless beyond the cap", h.tryStateless("alice"), 2)
	if err := h.tryTurn("bob"); err != nil {
		t.Fatalf("another user's turn: %v", err)
	}
	if err := h.tryStateless("bob"); err != nil {
		t.Fatalf("another user's stateless run: %v", err)
	}

	a.stop() // the turn returned: its slot is free
	if err := h.tryStateless("alice"); err != nil {
		t.Fatalf("stateless run after a turn ended: %v", err)
	}
	if err := h.tryTurn("alice"); err != nil {
		t.Fatalf("turn after a turn ended: %v", err)
	}
}

// TestTurnSlotReleasedOnEveryExit: with a cap of one turn at once, the
// next turn runs after the previous one ended in any way: an error, the
// client leaving, a panic of the caller's event handler, a refused start,
// or a turn released without running.
func TestTurnSlotReleasedOnEveryExit(t *testing.T) {
	cases := []struct {
		name string
		// slots is the cap (default 1).
		slots int
		// run ends one run of user carol somehow.
		run func(t *testing.T, h *harness)
	}{
		{"turn fails", 0, func(t *testing.T, h *harness) {
			h.llm.Enqueue(llmtest.Reply{Status: 500})
			if err := h.tryTurn("carol"); err != nil {
				t.Fatal(err)
			}
		}},
		{"client leaves the turn", 0, func(t *testing.T, h *harness) {
			h.hold(t, "carol", false).stop()
		}},
		{"client leaves the stateless run", 0, func(t *testing.T, h *harness) {
			h.hold(t, "carol", true).stop()
		}},
		{"event handler panics in a turn", 0, func(t *testing.T, h *harness) {
			k := newKey()
			k.UserID = "carol"
			tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			tr.Run(context.Background(), func(Event) { once.Do(func() { panic("handler bug") }) })
		}},
		{"event handler panics in a stateless run", 0, func(t *testing.T, h *harness) {
			defer func() {
				if recover() == nil {
					t.Fatal("the handler's panic did not reach the caller")
				}
			}()
			_, _ = h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("hi"), UserID: "carol"},
				func(Event) { panic("handler bug") })
		}},
		{"stateless run fails before any event", 0, func(t *testing.T, h *harness) {
			h.llm.Enqueue(llmtest.Reply{Status: 400})
			if err := h.tryStateless("carol"); err == nil {
				t.Fatal("the refused LLM call did not fail the run")
			}
		}},
		{"start refused on a busy session", 2, func(t *testing.T, h *harness) {
			// The busy session's turn holds one of the two slots.
			busy := newKey()
			busy.UserID = "carol"
			h.holdSession(t, busy, false)
			_, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: busy, AgentID: "tester", Message: "again"})
			if !errors.Is(err, store.ErrLeaseHeld) {
				t.Fatalf("StartTurn on a busy session = %v, want ErrLeaseHeld", err)
			}
		}},
		{"turn released without running", 0, func(t *testing.T, h *harness) {
			k := newKey()
			k.UserID = "carol"
			tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, func(o *Options) { o.MaxTurnsPerUser = max(tc.slots, 1) })
			tc.run(t, h)
			// The slot of the run that ended is free again.
			if err := h.tryTurn("carol"); err != nil {
				t.Fatalf("next turn: %v", err)
			}
			if err := h.tryStateless("carol"); err != nil {
				t.Fatalf("next stateless run: %v", err)
			}
		})
	}
}

// renewLog is a store whose RenewTurnSlot calls are reported on renews;
// lose makes each of them find the slot taken.
type renewLog struct {
	store.Store
	renews chan struct{}
	lose   bool
}

func (r *renewLog) RenewTurnSlot(ctx context.Context, userID string, slot int, owner string, ttl time.Duration) error {
	err := r.Store.RenewTurnSlot(ctx, userID, slot, owner, ttl)
	if r.lose {
		err = store.ErrLeaseLost
	}
	r.renews <- struct{}{}
	return err
}

// TestTurnSlotRenewal: a slot is renewed while its run goes on (again
// and again), never after its release, and not again once found lost.
func TestTurnSlotRenewal(t *testing.T) {
	const ttl = 30 * time.Millisecond
	for _, lose := range []bool{false, true} {
		h := newHarness(t, nil)
		rl := &renewLog{Store: h.st, renews: make(chan struct{}, 1000), lose: lose}
		h.rt.o.Store = rl
		h.rt.o.LeaseTTL = ttl
		ts, err := h.rt.takeTurnSlot(context.Background(), "user-1", "owner-1", h.rt.o.MaxTurnsPerUser)
		if err != nil {
			t.Fatal(err)
		}
		<-rl.renews
		if lose {
			// No renewal follows a lost one: none within ten periods.
			select {
			case <-rl.renews:
				t.Fatal("a lost slot was renewed again")
			case <-time.After(10 * ttl):
			}
			ts.release(context.Background())
			continue
		}
		<-rl.renews // and again
		ts.release(context.Background())
		for len(rl.renews) > 0 {
			<-rl.renews // renewals that ran before the release
		}
		select {
		case <-rl.renews:
			t.Fatal("a released slot was renewed")
		case <-time.After(10 * ttl):
		}
		if _, err := rl.AcquireTurnSlot(context.Background(), "user-1", "owner-2", 1, ttl); err != nil {
			t.Fatalf("the released slot is not free: %v", err)
		}
	}
}

// gatedSlots is a store whose AcquireTurnSlot waits for gate (a store
// across the network, as far as the caller can tell); entered is closed
// when it is called.
type gatedSlots struct {
	store.Store
	gate, entered chan struct{}
}

func (g *gatedSlots) AcquireTurnSlot(ctx context.Context, userID, owner string, n int, ttl time.Duration) (int, error) {
	close(g.entered)
	select {
	case <-g.gate:
	case <-time.After(10 * time.Second): // a deadlock, turned into a failure
		return 0, errors.New("AcquireTurnSlot was never let through: it blocked its caller")
	}
	return g.Store.AcquireTurnSlot(ctx, userID, owner, n, ttl)
}

// inMemorySlots is gatedSlots declaring its slots in memory.
type inMemorySlots struct{ *gatedSlots }

func (inMemorySlots) TurnSlotsInMemory() {}

// TestStartTurnSlot: a store that counts its slots in memory is asked on
// the caller's goroutine, before startTurnSlot returns; any other store on
// another one, so that startTurnSlot returns while the call still waits.
func TestStartTurnSlot(t *testing.T) {
	for _, inMemory := range []bool{true, false} {
		h := newHarness(t, nil)
		g := &gatedSlots{Store: h.st, gate: make(chan struct{}), entered: make(chan struct{})}
		h.rt.o.Store = g
		if inMemory {
			h.rt.o.Store = inMemorySlots{g}
			close(g.gate) // inline: it must not wait
		}
		wait := h.rt.startTurnSlot(context.Background(), "user-1", "owner-1", h.rt.o.MaxTurnsPerUser)
		if inMemory {
			select {
			case <-g.entered:
			default:
				t.Fatal("in memory: the slot was not taken before startTurnSlot returned")
			}
		} else {
			close(g.gate) // startTurnSlot returned while the store call waited
		}
		ts, err := wait()
		if err != nil || ts == nil {
			t.Fatalf("inMemory=%v: slot %v, %v", inMemory, ts, err)
		}
		ts.release(context.Background())
	}
}
