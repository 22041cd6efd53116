package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"agentchat/internal/store"
)

// ---- device locks ----

// deviceLockTests are the device lock tests of the suite, run by Run.
var deviceLockTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"DeviceLock", testDeviceLock},
	{"DeviceLockExpiry", testDeviceLockExpiry},
	{"DeviceLockRealExpiry", testDeviceLockRealExpiry},
	{"DeviceLockRace", testDeviceLockRace},
	{"DeviceLockIndependent", testDeviceLockIndependent},
	{"DeviceLockBadArgs", testDeviceLockBadArgs},
}

// lockStep is one operation on a device lock and its expected outcome:
// an acquisition succeeds or is refused with ErrLeaseHeld; a release
// always succeeds.
type lockStep struct {
	what    string
	release bool
	owner   string
	held    bool // the acquisition must be refused with ErrLeaseHeld
}

// runLockSteps runs steps on the lock of (project, node), each
// acquisition for ttl.
func runLockSteps(t *testing.T, s store.Store, project, node string, ttl time.Duration, steps []lockStep) {
	t.Helper()
	for _, st := range steps {
		if st.release {
			noErr(t, st.what+": ReleaseDeviceLock("+st.owner+")", s.ReleaseDeviceLock(t.Context(), project, node, st.owner))
			continue
		}
		acquire(t, s, st.what, project, node, st.owner, ttl, st.held)
	}
}

// acquire calls AcquireDeviceLock and checks that it succeeds, or, when
// held, that it is refused with ErrLeaseHeld.
func acquire(t *testing.T, s store.Store, what, project, node, owner string, ttl time.Duration, held bool) {
	t.Helper()
	err := s.AcquireDeviceLock(t.Context(), project, node, owner, ttl)
	name := fmt.Sprintf("%s: AcquireDeviceLock(%s, %s)", what, node, owner)
	if held {
		wantErr(t, name, err, store.ErrLeaseHeld)
		return
	}
	noErr(t, name, err)
}

// testDeviceLock: acquire, renew, refuse, release; no session needed.
func testDeviceLock(t *testing.T, s store.Store) {
	p := newProject()
	runLockSteps(t, s, p, "node-1", time.Minute, []lockStep{
		{what: "free lock", owner: "A"},
		{what: "renewal by its owner", owner: "A"},
		{what: "another owner while A holds", owner: "B", held: true},
		{what: "release by a non-owner", owner: "B", release: true},
		{what: "another owner after B's no-op release", owner: "B", held: true},
		{what: "renewal after B's no-op release", owner: "A"},
		{what: "release by the owner", owner: "A", release: true},
		{what: "second release by the former owner", owner: "A", release: true},
		{what: "another owner after A released", owner: "B"},
		{what: "the former owner while B holds", owner: "A", held: true},
		{what: "release by the former owner", owner: "A", release: true},
		{what: "a third owner after A's no-op release", owner: "C", held: true},
		{what: "release by B", owner: "B", release: true},
		{what: "the former owner after B released", owner: "A"},
	})
	noErr(t, "ReleaseDeviceLock of a lock that never existed", s.ReleaseDeviceLock(t.Context(), p, "never-locked", "A"))
}

// testDeviceLockExpiry moves the store's clock: an expired lock is free,
// a renewal moves the expiry to now+ttl, and an expired lock nobody took
// is still renewed by its owner.
func testDeviceLockExpiry(t *testing.T, s store.Store) {
	clock := clockOf(t, s)
	p := newProject()
	const n = "node-1"
	acquire(t, s, "free lock", p, n, "A", time.Minute, false)
	clock.Advance(30 * time.Second)
	acquire(t, s, "half-way through A's lock", p, n, "B", time.Minute, true)
	acquire(t, s, "renewal by A", p, n, "A", time.Minute, false) // until +90s
	clock.Advance(40 * time.Second)                              // +70s: past the first expiry
	acquire(t, s, "past the first expiry, before the renewed one", p, n, "B", time.Minute, true)
	clock.Advance(21 * time.Second) // +91s
	acquire(t, s, "after A's lock expired", p, n, "B", time.Minute, false)
	acquire(t, s, "A after B took its expired lock", p, n, "A", time.Minute, true)
	noErr(t, "ReleaseDeviceLock(A) after losing it", s.ReleaseDeviceLock(t.Context(), p, n, "A"))
	acquire(t, s, "C after A's no-op release", p, n, "C", time.Minute, true)

	// A short renewal lets the lock expire.
	acquire(t, s, "short renewal by B", p, n, "B", time.Second, false)
	clock.Advance(2 * time.Second)
	acquire(t, s, "C after B's short renewal expired", p, n, "C", time.Minute, false)

	// An expired lock that nobody took is its owner's to renew.
	const n2 = "node-2"
	acquire(t, s, "free lock", p, n2, "D", time.Minute, false)
	clock.Advance(2 * time.Minute)
	acquire(t, s, "D renewing its expired lock", p, n2, "D", time.Minute, false)
	acquire(t, s, "E after D renewed", p, n2, "E", time.Minute, true)
	// The owner may release its expired lock; it is free afterwards.
	clock.Advance(2 * time.Minute)
	noErr(t, "ReleaseDeviceLock(D) of its expired lock", s.ReleaseDeviceLock(t.Context(), p, n2, "D"))
	acquire(t, s, "E after D released", p, n2, "E", time.Minute, false)
}

// testDeviceLockRealExpiry: a lock with a short ttl expires in real time
// (only eventual success is asserted, never how long it took).
func testDeviceLockRealExpiry(t *testing.T, s store.Store) {
	p := newProject()
	acquire(t, s, "free lock", p, "node-1", "A", 50*time.Millisecond, false)
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := s.AcquireDeviceLock(t.Context(), p, "node-1", "B", time.Minute)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("AcquireDeviceLock(B) while waiting for expiry: %v, want nil or ErrLeaseHeld", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("AcquireDeviceLock(B): the expired lock was never free (last error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	acquire(t, s, "A after B took the expired lock", p, "node-1", "A", time.Minute, true)
}

// raceLock has n distinct owners (prefix-i) acquire the lock of (project,
// node) at once; exactly one must win and the others get ErrLeaseHeld. It
// returns the winner.
func raceLock(t *testing.T, s store.Store, project, node, prefix string, n int) string {
	t.Helper()
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = s.AcquireDeviceLock(t.Context(), project, node, fmt.Sprintf("%s-%d", prefix, i), time.Minute)
		})
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil && winner == "":
			winner = fmt.Sprintf("%s-%d", prefix, i)
		case err == nil:
			t.Errorf("%s-%d also acquired the lock won by %s", prefix, i, winner)
		case !errors.Is(err, store.ErrLeaseHeld):
			t.Errorf("%s-%d: %v, want nil or ErrLeaseHeld", prefix, i, err)
		}
	}
	if winner == "" {
		t.Fatalf("none of %d racing owners acquired the free lock", n)
	}
	return winner
}

// testDeviceLockRace: of owners racing for a free or expired lock, exactly
// one wins, and it holds the lock afterwards.
func testDeviceLockRace(t *testing.T, s store.Store) {
	clock := clockOf(t, s)
	p := newProject()
	const n, node = 8, "node-1"
	w := raceLock(t, s, p, node, "first", n)
	for i := range n {
		if o := fmt.Sprintf("first-%d", i); o != w {
			acquire(t, s, "a loser after the race", p, node, o, time.Minute, true)
		}
	}
	acquire(t, s, "renewal by the winner", p, node, w, time.Minute, false)

	// Over the winner's expired lock, a new race has one winner again.
	clock.Advance(2 * time.Minute)
	w2 := raceLock(t, s, p, node, "second", n)
	acquire(t, s, "the first winner after the second race", p, node, w, time.Minute, true)
	acquire(t, s, "renewal by the second winner", p, node, w2, time.Minute, false)

	// Racing renewals and takeovers: the holder keeps its lock.
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			owner := w2
			if i%2 == 1 {
				owner = fmt.Sprintf("third-%d", i)
			}
			errs[i] = s.AcquireDeviceLock(t.Context(), p, node, owner, time.Minute)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 0 {
			noErr(t, fmt.Sprintf("racing renewal %d by the holder", i), err)
		} else {
			wantErr(t, fmt.Sprintf("racing takeover by third-%d", i), err, store.ErrLeaseHeld)
		}
	}
}

// testDeviceLockIndependent: locks of different nodes or projects do not
// interfere (also with ids that would collide in a naive composite key),
// nor do device locks and session turn leases.
func testDeviceLockIndependent(t *testing.T, s store.Store) {
	ctx := t.Context()
	p, p2 := newProject(), newProject()
	const n = "node-1"
	acquire(t, s, "A's lock", p, n, "A", time.Minute, false)
	acquire(t, s, "A's lock with # in its ids", p+"#DEV#x", "y", "A", time.Minute, false)

	others := []struct {
		name, project, node string
	}{
		{"another node of the project", p, "node-2"},
		{"the same node id in another project", p2, n},
		{"another node in another project", p2, "node-2"},
		{"a node id that is a prefix", p, "node"},
		{"a node id that extends it", p, n + "0"},
		{"a node id with the project's separator", p, "x#DEV#" + n},
		{"ids that collide in a naive key", p, "x#DEV#y"},
		{"the project id with a suffix", p + "#DEV#x#DEV#y", n},
		{"a node id in other case", p, "NODE-1"},
	}
	for _, o := range others {
		acquire(t, s, o.name, o.project, o.node, "B", time.Minute, false)
	}
	acquire(t, s, "A's lock after B took the others", p, n, "B", time.Minute, true)
	acquire(t, s, "A's # lock after B took the others", p+"#DEV#x", "y", "B", time.Minute, true)
	for _, o := range others {
		noErr(t, o.name+": ReleaseDeviceLock(B)", s.ReleaseDeviceLock(ctx, o.project, o.node, "B"))
	}
	acquire(t, s, "A's lock after B released the others", p, n, "B", time.Minute, true)
	for _, o := range others {
		acquire(t, s, o.name+" after B released it", o.project, o.node, "C", time.Minute, false)
	}
	// A's release frees its lock only.
	noErr(t, "ReleaseDeviceLock(A)", s.ReleaseDeviceLock(ctx, p, n, "A"))
	acquire(t, s, "A's # lock after A released the other", p+"#DEV#x", "y", "B", time.Minute, true)
	acquire(t, s, "C after A released", p, n, "C", time.Minute, false)

	// A device lock named like a session is not its turn lease.
	k := newKey(p, "alice")
	create(t, s, k, nil)
	noErr(t, "AcquireLease(A)", s.AcquireLease(ctx, k, "A", time.Minute))
	acquire(t, s, "a node id equal to a leased thread id", p, k.ThreadID, "B", time.Minute, false)
	wantErr(t, "AcquireLease(B) while A holds the turn lease", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	noErr(t, "ReleaseDeviceLock(B)", s.ReleaseDeviceLock(ctx, p, k.ThreadID, "B"))
	wantErr(t, "AcquireLease(B) after the device lock was released", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))
	acquire(t, s, "the device lock after the turn lease was released", p, k.ThreadID, "C", time.Minute, false)
}

// testDeviceLockBadArgs: arguments that name no lock or no holder are
// errors (never ErrLeaseHeld) and take nothing; releasing with them is a
// no-op.
func testDeviceLockBadArgs(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	for _, bad := range []struct {
		name                 string
		project, node, owner string
		ttl                  time.Duration
	}{
		{"empty project", "", "node-1", "A", time.Minute},
		{"empty node", p, "", "A", time.Minute},
		{"empty owner", p, "node-1", "", time.Minute},
		{"zero ttl", p, "node-1", "A", 0},
		{"negative ttl", p, "node-1", "A", -time.Second},
	} {
		err := s.AcquireDeviceLock(ctx, bad.project, bad.node, bad.owner, bad.ttl)
		if err == nil || errors.Is(err, store.ErrLeaseHeld) {
			t.Errorf("AcquireDeviceLock(%s) = %v, want an error that is not ErrLeaseHeld", bad.name, err)
		}
		noErr(t, "ReleaseDeviceLock("+bad.name+")", s.ReleaseDeviceLock(ctx, bad.project, bad.node, bad.owner))
	}
	acquire(t, s, "after the refused acquisitions", p, "node-1", "B", time.Minute, false)
	acquire(t, s, "A after the refused acquisitions", p, "node-1", "A", time.Minute, true)
}
