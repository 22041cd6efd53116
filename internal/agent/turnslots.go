package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"agentchat/internal/store"
)

// DefaultMaxTurnsPerUser is how many turns (project chat turns and
// stateless runs together) one user runs at once when
// Options.MaxTurnsPerUser is zero.
const DefaultMaxTurnsPerUser = 8

// turnSlot is one of a user's turn slots (store.TurnSlots), held by a turn
// or a stateless run while it runs: renewed every LeaseTTL/3, like the
// session lease, so that the slot of a crashed instance frees itself
// within LeaseTTL, and released when the run ends. A nil *turnSlot (no
// cap applies) does nothing. No goroutine waits between renewals: a timer
// runs each one and sets itself again.
type turnSlot struct {
	r *Runtime
	// user is the pool of the slot: a user id, or an API key's
	// KeySlotPool.
	user, owner string
	slot        int
	// rctx carries the values of the request to the renewals; stop
	// cancels it, ending a renewal under way.
	rctx context.Context
	stop context.CancelFunc
	// mu is held while a renewal runs, and by release.
	mu    sync.Mutex
	timer *time.Timer
	ended bool // released, or lost: no renewal any more
	once  sync.Once
}

// KeySlotPool is the SlotPool of the turns of an API key with its own
// max_parallel (store.KeyLimits.MaxParallel): its slots are counted apart
// from any user's.
func KeySlotPool(keyID string) string { return "apikey#" + keyID }

// slotsOf is whose turn slots a run of userID takes and how many there
// are: the n slots of pool when both are given (an API key's own cap,
// which replaces the user's), else the user's Options.MaxTurnsPerUser
// (negative: no cap).
func (r *Runtime) slotsOf(userID, pool string, n int) (string, int) {
	if pool != "" && n > 0 {
		return pool, n
	}
	return userID, r.o.MaxTurnsPerUser
}

// takeTurnSlot takes one of the n slots of pool (a user's, or an API
// key's: see slotsOf) for owner and starts renewing it. The error wraps a
// *store.TurnSlotsFullError when that many turns already run. Without a
// store or a pool (stateless runs of tests), or with a negative n,
// nothing is counted and the slot is nil.
func (r *Runtime) takeTurnSlot(ctx context.Context, pool, owner string, n int) (*turnSlot, error) {
	if r.o.Store == nil || pool == "" || n < 0 {
		return nil, nil
	}
	slot, err := r.o.Store.AcquireTurnSlot(ctx, pool, owner, n, r.o.LeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("take a turn slot (at most %d turns at once): %w", n, err)
	}
	// The renewal outlives the caller's cancellation (a client gone): the
	// slot is held until release, which every exit path calls.
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	ts := &turnSlot{r: r, user: pool, owner: owner, slot: slot, rctx: rctx, stop: stop}
	ts.mu.Lock() // the first renewal waits until ts.timer is set
	ts.timer = time.AfterFunc(ts.every(), ts.renew)
	ts.mu.Unlock()
	return ts, nil
}

// startTurnSlot starts taking a turn slot (takeTurnSlot) and returns the
// function that waits for it, to be called once. A store that counts the
// slots in memory (store.InMemoryTurnSlots) is asked inline, since
// starting a goroutine and waiting for it costs more than the call; any
// other one on a goroutine, so that the caller's own store calls overlap
// it.
func (r *Runtime) startTurnSlot(ctx context.Context, pool, owner string, n int) (wait func() (*turnSlot, error)) {
	if _, inMemory := store.Capability[store.InMemoryTurnSlots](r.o.Store); inMemory || r.o.Store == nil {
		slot, err := r.takeTurnSlot(ctx, pool, owner, n)
		return func() (*turnSlot, error) { return slot, err }
	}
	type taken struct {
		slot *turnSlot
		err  error
	}
	c := make(chan taken, 1)
	go func() {
		slot, err := r.takeTurnSlot(ctx, pool, owner, n)
		c <- taken{slot, err}
	}()
	return func() (*turnSlot, error) {
		t := <-c
		return t.slot, t.err
	}
}

// every is the period of the renewals.
func (ts *turnSlot) every() time.Duration { return max(ts.r.o.LeaseTTL/3, time.Millisecond) }

// renew extends the slot and sets the timer for the next renewal. A lost
// slot (expired and taken by another turn) is not renewed any more: the
// turn goes on, uncounted.
func (ts *turnSlot) renew() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.ended {
		return
	}
	o, log, ctx := ts.r.o, ts.r.log, ts.rctx
	err := o.Store.RenewTurnSlot(ctx, ts.user, ts.slot, ts.owner, o.LeaseTTL)
	switch {
	case errors.Is(err, store.ErrLeaseLost):
		log.WarnContext(ctx, "turn slot lost", "slot", ts.slot)
		ts.ended = true
		return
	case err != nil && ctx.Err() == nil:
		log.WarnContext(ctx, "renew turn slot", "slot", ts.slot, "err", err)
	}
	if ctx.Err() == nil {
		ts.timer.Reset(ts.every())
	}
}

// release stops the renewal and frees the slot, once; ctx gives the
// values of the request (its cancellation is ignored). A nil ts does
// nothing.
func (ts *turnSlot) release(ctx context.Context) {
	if ts == nil {
		return
	}
	ts.once.Do(func() {
		ts.stop() // a renewal under way ends
		ts.mu.Lock()
		ts.ended = true
		ts.timer.Stop()
		ts.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
		defer cancel()
		if err := ts.r.o.Store.ReleaseTurnSlot(ctx, ts.user, ts.slot, ts.owner); err != nil {
			ts.r.log.ErrorContext(ctx, "release turn slot", "slot", ts.slot, "err", err)
		}
	})
}

// TooManyTurnsMessage is the sentence answered to a user whose turn is
// refused because they already run n turns at once (the 429 of both
// surfaces).
func TooManyTurnsMessage(n int) string {
	return fmt.Sprintf("Too many responses are being generated for you at once (at most %d). Wait for one to finish, then try again.", n)
}
