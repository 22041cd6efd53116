package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// TestDeviceLockTwoHandles: two handles on one file (as two processes
// would be) race for a device lock; exactly one owner gets it, and each
// handle sees the other's lock.
func TestDeviceLockTwoHandles(t *testing.T) {
	ctx := context.Background()
	a, path := openTemp(t)
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer func() { _ = b.Close() }()
	handles := []*Store{a, b}
	p := uuid.NewString()

	for round := range 3 {
		node := fmt.Sprint("node-", round)
		const n = 8
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = handles[i%2].AcquireDeviceLock(ctx, p, node, fmt.Sprint("owner-", i), time.Minute)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner < 0:
				winner = i
			case err == nil:
				t.Errorf("round %d: owner-%d and owner-%d both acquired the lock", round, winner, i)
			case !errors.Is(err, store.ErrLeaseHeld):
				t.Errorf("round %d: owner-%d: %v, want nil or ErrLeaseHeld", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody acquired the free lock", round)
		}
		owner := fmt.Sprint("owner-", winner)
		for _, h := range handles {
			if err := h.AcquireDeviceLock(ctx, p, node, "late", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
				t.Errorf("round %d: a late owner: %v, want ErrLeaseHeld", round, err)
			}
			if err := h.AcquireDeviceLock(ctx, p, node, owner, time.Minute); err != nil {
				t.Errorf("round %d: renewal by the winner: %v", round, err)
			}
		}
		// Released through the other handle, the lock is free for both.
		other := handles[(winner+1)%2]
		if err := other.ReleaseDeviceLock(ctx, p, node, owner); err != nil {
			t.Fatalf("round %d: release: %v", round, err)
		}
		if err := handles[winner%2].AcquireDeviceLock(ctx, p, node, "late", time.Minute); err != nil {
			t.Errorf("round %d: a late owner after the release: %v", round, err)
		}
	}
}

// TestDeviceLockRows: the table keeps one row per device, taken over in
// place, and a release deletes it.
func TestDeviceLockRows(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s, _ := openTemp(t, WithClock(func() time.Time { return now }))
	rows := func() (n int, owner, until string) {
		t.Helper()
		if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(owner), ''), COALESCE(MAX(expires_at), '') FROM device_locks`).Scan(&n, &owner, &until); err != nil {
			t.Fatalf("read device_locks: %v", err)
		}
		return n, owner, until
	}
	if err := s.AcquireDeviceLock(ctx, "p", "n", "A", time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, owner, until := rows(); n != 1 || owner != "A" || until != "2030-01-02T03:05:05.000000000Z" {
		t.Errorf("after acquire: %d rows, owner %q until %q", n, owner, until)
	}
	now = now.Add(2 * time.Minute)
	if err := s.AcquireDeviceLock(ctx, "p", "n", "B", time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, owner, until := rows(); n != 1 || owner != "B" || until != "2030-01-02T03:07:05.000000000Z" {
		t.Errorf("after takeover: %d rows, owner %q until %q", n, owner, until)
	}
	if err := s.AcquireDeviceLock(ctx, "p", "n", "A", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("A while B holds: %v", err)
	}
	if n, owner, _ := rows(); n != 1 || owner != "B" {
		t.Errorf("after a refused acquire: %d rows, owner %q", n, owner)
	}
	if err := s.ReleaseDeviceLock(ctx, "p", "n", "B"); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := rows(); n != 0 {
		t.Errorf("after release: %d rows", n)
	}
}

// A database at schema 4 gains the device_locks table, its sessions
// intact.
func TestMigrationAddsDeviceLocks(t *testing.T) {
	ctx := context.Background()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t"}
	path := createAtSchema(t, 4, store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "kept"})
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open with migration 5: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if got, err := s.GetSession(ctx, k); err != nil || got.Title != "kept" {
		t.Fatalf("session after migration: %+v, %v", got, err)
	}
	if err := s.AcquireDeviceLock(ctx, "p", "n", "A", time.Minute); err != nil {
		t.Fatalf("AcquireDeviceLock after migration: %v", err)
	}
	if err := s.AcquireDeviceLock(ctx, "p", "n", "B", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("B while A holds, after migration: %v", err)
	}
}
