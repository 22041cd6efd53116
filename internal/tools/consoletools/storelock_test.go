package consoletools

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// openSQLite opens n handles on one new SQLite file, as n instances of
// the local server on one database would.
func openSQLite(t *testing.T, n int) []*sqlite.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.db")
	var hs []*sqlite.Store
	for range n {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("sqlite.Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		hs = append(hs, s)
	}
	return hs
}

func TestStoreLocker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	hs := openSQLite(t, 2)
	a, b := StoreLocker{Locks: hs[0]}, StoreLocker{Locks: hs[1]}
	const p, n = "project-1", "node-1"

	steps := []struct {
		name    string
		l       StoreLocker
		release bool
		owner   string
		busy    bool
	}{
		{name: "free", l: a, owner: "A"},
		{name: "renewal by the owner", l: a, owner: "A"},
		{name: "another owner on another handle", l: b, owner: "B", busy: true},
		{name: "another owner on the same handle", l: a, owner: "B", busy: true},
		{name: "release by a non-owner", l: b, owner: "B", release: true},
		{name: "another owner after the no-op release", l: b, owner: "B", busy: true},
		{name: "release by the owner", l: b, owner: "A", release: true},
		{name: "release twice", l: a, owner: "A", release: true},
		{name: "another owner after the release", l: b, owner: "B"},
		{name: "the former owner", l: a, owner: "A", busy: true},
	}
	for _, st := range steps {
		if st.release {
			if err := st.l.ReleaseDeviceLock(ctx, p, n, st.owner); err != nil {
				t.Errorf("%s: ReleaseDeviceLock(%s) = %v", st.name, st.owner, err)
			}
			continue
		}
		err := st.l.AcquireDeviceLock(ctx, p, n, st.owner, time.Minute)
		switch {
		case !st.busy && err != nil:
			t.Errorf("%s: AcquireDeviceLock(%s) = %v, want nil", st.name, st.owner, err)
		case st.busy && (!errors.Is(err, ErrDeviceBusy) || !errors.Is(err, store.ErrLeaseHeld)):
			t.Errorf("%s: AcquireDeviceLock(%s) = %v, want an error matching ErrDeviceBusy and store.ErrLeaseHeld", st.name, st.owner, err)
		}
	}
	// Other devices and projects are independent.
	if err := a.AcquireDeviceLock(ctx, p, "node-2", "A", time.Minute); err != nil {
		t.Errorf("another node: %v", err)
	}
	if err := a.AcquireDeviceLock(ctx, "project-2", n, "A", time.Minute); err != nil {
		t.Errorf("another project: %v", err)
	}
}

// Errors other than a held lease are not ErrDeviceBusy: the toolset
// reports them at once instead of waiting for the device.
func TestStoreLockerOtherErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := StoreLocker{Locks: openSQLite(t, 1)[0]}
	for _, tc := range []struct {
		name  string
		owner string
		ttl   time.Duration
	}{{"empty owner", "", time.Minute}, {"zero ttl", "A", 0}} {
		if err := l.AcquireDeviceLock(ctx, "p", "n", tc.owner, tc.ttl); err == nil || errors.Is(err, ErrDeviceBusy) {
			t.Errorf("%s: AcquireDeviceLock = %v, want an error that is not ErrDeviceBusy", tc.name, err)
		}
	}
	var none StoreLocker
	if err := none.AcquireDeviceLock(ctx, "p", "n", "A", time.Minute); err == nil || errors.Is(err, ErrDeviceBusy) {
		t.Errorf("without a store: AcquireDeviceLock = %v, want an error that is not ErrDeviceBusy", err)
	}
	if err := none.ReleaseDeviceLock(ctx, "p", "n", "A"); err == nil {
		t.Error("without a store: ReleaseDeviceLock succeeded")
	}
}

// Two toolsets on one database (two instances) never hold one device at
// once: the second waits, reports the device busy, and gets it once the
// first released it.
func TestStoreLockerAcrossToolsets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	hs := openSQLite(t, 2)
	ts1, ts2 := New(Options{Locks: StoreLocker{Locks: hs[0]}}), New(Options{Locks: StoreLocker{Locks: hs[1]}})
	for _, ts := range []*Toolset{ts1, ts2} {
		ts.lockTTL, ts.lockWait, ts.lockPoll = time.Second, 150*time.Millisecond, 20*time.Millisecond
	}
	lost := func(err error) { t.Errorf("lock lost: %v", err) }
	l1, err := ts1.lock(ctx, "p", "n", "R1", lost)
	if err != nil {
		t.Fatalf("first toolset: %v", err)
	}
	if _, err := ts2.lock(ctx, "p", "n", "R1", lost); !errors.Is(err, ErrDeviceBusy) {
		t.Fatalf("second toolset while the first holds: %v, want ErrDeviceBusy", err)
	}
	l1.release()
	l2, err := ts2.lock(ctx, "p", "n", "R1", lost)
	if err != nil {
		t.Fatalf("second toolset after the release: %v", err)
	}
	l2.release()
}
