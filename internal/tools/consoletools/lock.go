package consoletools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ErrDeviceBusy is the error a DeviceLocker returns (or wraps) when
// another owner holds the device's lease.
var ErrDeviceBusy = errors.New("the device's console is in use by another chat")

// errLockLost stops a device whose lease could not be renewed.
var errLockLost = errors.New("the device's lock was lost (another chat may be using its console)")

// DeviceLocker is a per-device lease held in the store, shared by every
// instance: at most one owner types into a console at a time.
//
// AcquireDeviceLock takes the lease of (projectID, nodeID) for owner
// until ttl from now; when the owner already holds it, it is renewed.
// When another owner holds an unexpired lease it returns an error
// matching ErrDeviceBusy. ReleaseDeviceLock gives the lease up if owner
// holds it (an expired or foreign lease is left alone, without error).
type DeviceLocker interface {
	AcquireDeviceLock(ctx context.Context, projectID, nodeID, owner string, ttl time.Duration) error
	ReleaseDeviceLock(ctx context.Context, projectID, nodeID, owner string) error
}

// MemoryLocker is a DeviceLocker for one process (tests, a single local
// server). The zero value is ready.
type MemoryLocker struct {
	mu     sync.Mutex
	leases map[[2]string]memLease
	now    func() time.Time
}

type memLease struct {
	owner string
	until time.Time
}

func (m *MemoryLocker) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// AcquireDeviceLock implements DeviceLocker.
func (m *MemoryLocker) AcquireDeviceLock(_ context.Context, projectID, nodeID, owner string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, now := [2]string{projectID, nodeID}, m.clock()
	if l, ok := m.leases[k]; ok && l.owner != owner && now.Before(l.until) {
		return ErrDeviceBusy
	}
	if m.leases == nil {
		m.leases = map[[2]string]memLease{}
	}
	m.leases[k] = memLease{owner: owner, until: now.Add(ttl)}
	return nil
}

// ReleaseDeviceLock implements DeviceLocker.
func (m *MemoryLocker) ReleaseDeviceLock(_ context.Context, projectID, nodeID, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{projectID, nodeID}
	if l, ok := m.leases[k]; ok && l.owner == owner {
		delete(m.leases, k)
	}
	return nil
}

// lease is a held device lock, renewed in the background.
type lease struct {
	stop chan struct{}
	done chan struct{}
	free func()
}

// release stops the renewals and gives the lease up (also when ctx is
// done: the release has its own short deadline).
func (l *lease) release() {
	close(l.stop)
	<-l.done
	l.free()
}

// lock takes the device's lease for one tool run: it waits up to
// lockWait (polling every lockPoll, honouring ctx) while another owner
// holds it, then renews it every ttl/2 until released; a renewal that
// finds the lease taken calls lost.
func (s *Toolset) lock(ctx context.Context, projectID, nodeID, name string, lost func(error)) (*lease, error) {
	owner := "console-tool-" + uuid.NewString()
	deadline := time.Now().Add(s.lockWait)
	for {
		err := s.locks.AcquireDeviceLock(ctx, projectID, nodeID, owner, s.lockTTL)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if !errors.Is(err, ErrDeviceBusy) {
			s.log.WarnContext(ctx, "device lock failed", "project_id", projectID, "node_id", nodeID, "err", err)
			return nil, fmt.Errorf("cannot lock %s's console", name)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%s is busy: %w; try again in a moment", name, ErrDeviceBusy)
		}
		t := time.NewTimer(min(s.lockPoll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
	l := &lease{stop: make(chan struct{}), done: make(chan struct{})}
	l.free = func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.locks.ReleaseDeviceLock(rctx, projectID, nodeID, owner); err != nil {
			s.log.WarnContext(ctx, "device lock release failed", "project_id", projectID, "node_id", nodeID, "err", err)
		}
	}
	go func() {
		defer close(l.done)
		t := time.NewTicker(s.lockTTL / 2)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				err := s.locks.AcquireDeviceLock(ctx, projectID, nodeID, owner, s.lockTTL)
				switch {
				case err == nil:
				case errors.Is(err, ErrDeviceBusy):
					lost(errLockLost)
					return
				case ctx.Err() != nil:
					return
				default: // try again at the next tick
					s.log.WarnContext(ctx, "device lock renewal failed", "project_id", projectID, "node_id", nodeID, "err", err)
				}
			}
		}
	}()
	return l, nil
}
