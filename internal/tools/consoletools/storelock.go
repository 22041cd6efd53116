package consoletools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// StoreLocker is the DeviceLocker of a store: the device leases live in
// the store (store.DeviceLocks), so they are shared by every instance on
// it. A refusal because another owner holds the lease (store.ErrLeaseHeld)
// is returned as an error that matches both ErrDeviceBusy and the store's
// error; other errors are returned as they are.
type StoreLocker struct {
	Locks store.DeviceLocks
}

var _ DeviceLocker = StoreLocker{}

// errNoStore is returned by a StoreLocker without a store.
var errNoStore = errors.New("device locker has no store")

// AcquireDeviceLock implements DeviceLocker.
func (l StoreLocker) AcquireDeviceLock(ctx context.Context, projectID, nodeID, owner string, ttl time.Duration) error {
	if l.Locks == nil {
		return errNoStore
	}
	err := l.Locks.AcquireDeviceLock(ctx, projectID, nodeID, owner, ttl)
	if errors.Is(err, store.ErrLeaseHeld) {
		return fmt.Errorf("%w: %w", ErrDeviceBusy, err)
	}
	return err
}

// ReleaseDeviceLock implements DeviceLocker.
func (l StoreLocker) ReleaseDeviceLock(ctx context.Context, projectID, nodeID, owner string) error {
	if l.Locks == nil {
		return errNoStore
	}
	return l.Locks.ReleaseDeviceLock(ctx, projectID, nodeID, owner)
}
