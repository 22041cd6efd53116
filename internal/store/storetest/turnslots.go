package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// ---- per-user turn slots ----

// turnSlotTests are the turn slot tests of the suite, run by Run.
var turnSlotTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"TurnSlots", testTurnSlots},
	{"TurnSlotsFirst", testTurnSlotsFirst},
	{"TurnSlotsExpiry", testTurnSlotsExpiry},
	{"TurnSlotsRace", testTurnSlotsRace},
	{"TurnSlotsBadArgs", testTurnSlotsBadArgs},
}

// takeSlot acquires one of the user's n slots for owner and returns it.
func takeSlot(t *testing.T, s store.Store, what, user, owner string, n int, ttl time.Duration) int {
	t.Helper()
	slot, err := s.AcquireTurnSlot(t.Context(), user, owner, n, ttl)
	if err != nil {
		t.Fatalf("%s: AcquireTurnSlot(%s, %s, %d): %v", what, user, owner, n, err)
	}
	if slot < 0 || slot >= n {
		t.Fatalf("%s: AcquireTurnSlot(%s, %s, %d) = slot %d, want 0..%d", what, user, owner, n, slot, n-1)
	}
	return slot
}

// slotsFull calls AcquireTurnSlot, which must be refused with a
// *store.TurnSlotsFullError for n slots, and returns its Until.
func slotsFull(t *testing.T, s store.Store, what, user, owner string, n int) time.Time {
	t.Helper()
	slot, err := s.AcquireTurnSlot(t.Context(), user, owner, n, time.Hour)
	if err == nil {
		t.Fatalf("%s: AcquireTurnSlot(%s, %s, %d) = slot %d, want ErrTurnSlotsFull", what, user, owner, n, slot)
	}
	wantErr(t, what, err, store.ErrTurnSlotsFull)
	var full *store.TurnSlotsFullError
	if !errors.As(err, &full) {
		t.Fatalf("%s: %v (%T) is not a *store.TurnSlotsFullError", what, err, err)
	}
	if full.Slots != n {
		t.Errorf("%s: Slots = %d, want %d", what, full.Slots, n)
	}
	if d := full.RetryAfter(time.Now()); d < time.Second {
		t.Errorf("%s: RetryAfter(now) = %v, want at least 1s", what, d)
	}
	return full.Until
}

// testTurnSlots: n owners get n distinct slots, the next one is refused
// with the earliest expiry among them, another user is not affected, and a
// released or renewed slot behaves as a lease does.
func testTurnSlots(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	alice, bob := "alice-"+uuid.NewString(), "bob-"+uuid.NewString()
	const n = 3
	ttls := map[string]time.Duration{"A": 3 * time.Hour, "B": time.Hour, "C": 2 * time.Hour}
	slots := map[string]int{}
	// lo and hi bound each owner's expiry.
	lo, hi := map[string]time.Time{}, map[string]time.Time{}
	for _, o := range []string{"A", "B", "C"} {
		lo[o] = clock.Now().Add(ttls[o])
		slots[o] = takeSlot(t, s, "owner "+o, alice, o, n, ttls[o])
		hi[o] = clock.Now().Add(ttls[o])
	}
	if got := []int{slots["A"], slots["B"], slots["C"]}; len(slices.Compact(slices.Sorted(slices.Values(got)))) != n {
		t.Fatalf("slots of A, B, C = %v, want %d distinct slots", got, n)
	}
	// The earliest expiry is B's.
	within(t, "Until with every slot held", slotsFull(t, s, "AcquireTurnSlot(D) while A, B, C hold", alice, "D", n), lo["B"], hi["B"])

	// Another user has slots of their own.
	takeSlot(t, s, "another user", bob, "D", n, time.Hour)

	// Renewing moves the earliest expiry: B's is now the latest.
	noErr(t, "RenewTurnSlot(B, 4h)", s.RenewTurnSlot(ctx, alice, slots["B"], "B", 4*time.Hour))
	within(t, "Until after B renewed", slotsFull(t, s, "AcquireTurnSlot(D) after B renewed", alice, "D", n), lo["C"], hi["C"])

	// Releasing or renewing a slot one does not hold changes nothing.
	noErr(t, "ReleaseTurnSlot(A's slot) by D", s.ReleaseTurnSlot(ctx, alice, slots["A"], "D"))
	noErr(t, "ReleaseTurnSlot(A's slot) of bob", s.ReleaseTurnSlot(ctx, bob, slots["A"], "A"))
	wantErr(t, "RenewTurnSlot(A's slot) by D", s.RenewTurnSlot(ctx, alice, slots["A"], "D", time.Hour), store.ErrLeaseLost)
	slotsFull(t, s, "AcquireTurnSlot(D) after releases by non-holders", alice, "D", n)

	// A released slot is free for the next turn.
	noErr(t, "ReleaseTurnSlot(B)", s.ReleaseTurnSlot(ctx, alice, slots["B"], "B"))
	noErr(t, "ReleaseTurnSlot(B) twice", s.ReleaseTurnSlot(ctx, alice, slots["B"], "B"))
	wantErr(t, "RenewTurnSlot(B) after release", s.RenewTurnSlot(ctx, alice, slots["B"], "B", time.Hour), store.ErrLeaseLost)
	if got := takeSlot(t, s, "owner D after B released", alice, "D", n, time.Hour); got != slots["B"] {
		t.Errorf("D took slot %d, want B's released slot %d", got, slots["B"])
	}
	slotsFull(t, s, "AcquireTurnSlot(E) while A, C, D hold", alice, "E", n)

	// A repeated acquisition by a holder succeeds (its answer may have
	// been lost) and takes nothing more.
	if got := takeSlot(t, s, "owner A again", alice, "A", n, time.Hour); got != slots["A"] {
		t.Errorf("A again took slot %d, want its own %d", got, slots["A"])
	}

	// Slots above the count asked for are not counted: a larger cap lets
	// one more in.
	takeSlot(t, s, "owner E with one more slot", alice, "E", n+1, time.Hour)
	slotsFull(t, s, "AcquireTurnSlot(F) with one more slot", alice, "F", n+1)
	noErr(t, "RenewTurnSlot(C)", s.RenewTurnSlot(ctx, alice, slots["C"], "C", time.Hour))
}

// testTurnSlotsFirst: an owner's first slot is store.FirstTurnSlot, when
// it is free.
func testTurnSlotsFirst(t *testing.T, s store.Store) {
	const n = 8
	for i := range 5 {
		user, owner := uuid.NewString(), uuid.NewString()
		want := store.FirstTurnSlot(owner, n)
		if got := takeSlot(t, s, fmt.Sprintf("owner %d", i), user, owner, n, time.Hour); got != want {
			t.Errorf("owner %d of a new user took slot %d, want FirstTurnSlot = %d", i, got, want)
		}
	}
	// Taken: the next owner with the same first slot gets another.
	user := uuid.NewString()
	a := uuid.NewString()
	first := takeSlot(t, s, "owner a", user, a, n, time.Hour)
	for {
		b := uuid.NewString()
		if store.FirstTurnSlot(b, n) != first {
			continue
		}
		if got := takeSlot(t, s, "owner b", user, b, n, time.Hour); got == first {
			t.Errorf("owner b took slot %d, which a holds", got)
		}
		break
	}
}

// testTurnSlotsExpiry: an expired slot is free for another owner; its
// former holder then cannot renew it, while a holder whose expired slot
// nobody took renews it.
func testTurnSlotsExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	user := uuid.NewString()
	const n = 2
	a := takeSlot(t, s, "owner A", user, "A", n, time.Hour)
	b := takeSlot(t, s, "owner B", user, "B", n, 3*time.Hour)
	slotsFull(t, s, "AcquireTurnSlot(C) while A, B hold", user, "C", n)

	clock.Advance(time.Hour + time.Second)
	if got := takeSlot(t, s, "owner C after A's slot expired", user, "C", n, time.Hour); got != a {
		t.Errorf("C took slot %d, want A's expired slot %d", got, a)
	}
	wantErr(t, "RenewTurnSlot(A) after C took it", s.RenewTurnSlot(ctx, user, a, "A", time.Hour), store.ErrLeaseLost)
	noErr(t, "ReleaseTurnSlot(A) after losing it", s.ReleaseTurnSlot(ctx, user, a, "A"))
	slotsFull(t, s, "AcquireTurnSlot(D) while B, C hold", user, "D", n)

	other := uuid.NewString()
	o := takeSlot(t, s, "owner E of another user", other, "E", 1, time.Hour)
	clock.Advance(time.Hour + time.Second)
	noErr(t, "RenewTurnSlot(E) of an expired slot nobody took", s.RenewTurnSlot(ctx, other, o, "E", time.Hour))
	slotsFull(t, s, "AcquireTurnSlot(F) after E renewed", other, "F", 1)
	noErr(t, "RenewTurnSlot(B)", s.RenewTurnSlot(ctx, user, b, "B", time.Hour))
}

// testTurnSlotsRace: of concurrent acquisitions by distinct owners, as
// many succeed as there are slots, each with its own slot.
func testTurnSlotsRace(t *testing.T, s store.Store) {
	user := uuid.NewString()
	const n, owners = 4, 12
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken []int
		full  int
		errs  []error
	)
	start := make(chan struct{})
	for i := range owners {
		wg.Go(func() {
			<-start
			slot, err := s.AcquireTurnSlot(t.Context(), user, fmt.Sprintf("owner-%d", i), n, time.Hour)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				taken = append(taken, slot)
			case errors.Is(err, store.ErrTurnSlotsFull):
				full++
			default:
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("concurrent AcquireTurnSlot failed: %v", errors.Join(errs...))
	}
	slices.Sort(taken)
	if len(taken) != n || len(slices.Compact(slices.Clone(taken))) != n || full != owners-n {
		t.Fatalf("concurrent acquisitions: slots %v taken and %d refused, want %d distinct slots and %d refused", taken, full, n, owners-n)
	}
}

// testTurnSlotsBadArgs: arguments that name no user, holder, slot count or
// duration are errors other than ErrTurnSlotsFull and take nothing.
func testTurnSlotsBadArgs(t *testing.T, s store.Store) {
	ctx := t.Context()
	user := uuid.NewString()
	cases := []struct {
		name        string
		user, owner string
		n           int
		ttl         time.Duration
	}{
		{"empty user", "", "A", 1, time.Hour},
		{"empty owner", user, "", 1, time.Hour},
		{"no slot", user, "A", 0, time.Hour},
		{"negative count", user, "A", -1, time.Hour},
		{"zero ttl", user, "A", 1, 0},
		{"negative ttl", user, "A", 1, -time.Second},
	}
	for _, tc := range cases {
		_, err := s.AcquireTurnSlot(ctx, tc.user, tc.owner, tc.n, tc.ttl)
		if err == nil || errors.Is(err, store.ErrTurnSlotsFull) {
			t.Errorf("AcquireTurnSlot with %s = %v, want an error other than ErrTurnSlotsFull", tc.name, err)
		}
	}
	// Nothing was taken: the one slot is free.
	takeSlot(t, s, "owner B after the bad calls", user, "B", 1, time.Hour)
	noErr(t, "ReleaseTurnSlot with an empty owner", s.ReleaseTurnSlot(ctx, user, 0, ""))
	noErr(t, "ReleaseTurnSlot of a negative slot", s.ReleaseTurnSlot(ctx, user, -1, "B"))
	if err := s.RenewTurnSlot(ctx, user, 0, "B", 0); err == nil {
		t.Error("RenewTurnSlot with a zero ttl succeeded")
	}
}
