package storetest

import (
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

// ---- the expiry of a held lease (back-pressure) ----

// leaseHeldTests are the tests of AcquireLease's *store.LeaseHeldError,
// run by Run.
var leaseHeldTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"LeaseHeldUntil", testLeaseHeldUntil},
}

// heldUntil calls AcquireLease(owner), which must be refused with a
// *store.LeaseHeldError that errors.Is(ErrLeaseHeld) and names holder "A",
// and returns its Until.
func heldUntil(t *testing.T, s store.Store, what string, k store.Key, owner string) time.Time {
	t.Helper()
	err := s.AcquireLease(t.Context(), k, owner, time.Hour)
	wantErr(t, what, err, store.ErrLeaseHeld)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("%s: %v (%T) is not a *store.LeaseHeldError", what, err, err)
	}
	if held.Owner != "A" {
		t.Errorf("%s: the error names holder %q, want A", what, held.Owner)
	}
	if d := held.RetryAfter(time.Now()); d < time.Second {
		t.Errorf("%s: RetryAfter(now) = %v, want at least 1s", what, d)
	}
	return held.Until
}

// within fails unless got is in [lo, hi] (store times: the store read its
// clock between the two readings of the test).
func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo) || got.After(hi) {
		t.Errorf("%s = %v, want between %v and %v", what, got, lo, hi)
	}
}

// testLeaseHeldUntil: a refused AcquireLease tells until when the lease is
// held: its expiry as set by the last acquisition, creation or renewal,
// or the end of the abort grace when an abort is pending and that comes
// first.
func testLeaseHeldUntil(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	before := clock.Now()
	noErr(t, "AcquireLease(A, 1h)", s.AcquireLease(ctx, k, "A", time.Hour))
	after := clock.Now()
	within(t, "Until of A's lease", heldUntil(t, s, "AcquireLease(B) while A holds", k, "B"), before.Add(time.Hour), after.Add(time.Hour))

	before = clock.Now()
	noErr(t, "RenewLease(A, 3h)", s.RenewLease(ctx, k, "A", 3*time.Hour))
	after = clock.Now()
	within(t, "Until after the renewal", heldUntil(t, s, "AcquireLease(B) after the renewal", k, "B"), before.Add(3*time.Hour), after.Add(3*time.Hour))

	// A pending abort frees the lease AbortGrace after its first request,
	// long before the lease expires.
	before = clock.Now()
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	after = clock.Now()
	within(t, "Until with an abort pending", heldUntil(t, s, "AcquireLease(B) with an abort pending", k, "B"),
		before.Add(store.AbortGrace), after.Add(store.AbortGrace))
	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))

	// A session created with its lease held.
	k2 := newKey(p, "alice")
	before = clock.Now()
	noErr(t, "CreateLeasedSession(A, 1h)", s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k2.ThreadID}, "A", time.Hour))
	after = clock.Now()
	within(t, "Until of a created lease", heldUntil(t, s, "AcquireLease(B) on the leased session", k2, "B"), before.Add(time.Hour), after.Add(time.Hour))

	// Another user's session is not found, not held.
	wantErr(t, "AcquireLease by another user", s.AcquireLease(ctx, store.Key{ProjectID: p, UserID: "bob", ThreadID: k2.ThreadID}, "B", time.Hour), store.ErrNotFound)
}
