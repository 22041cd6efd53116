package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// The device lock statements are not among the prepared hot statements:
// a lock is taken once per tool run and renewed every few seconds, and
// Open must keep working on a schema older than the device_locks table
// (the migration tests open one).
const (
	// acquireDeviceLockSQL inserts the row when there is none, else takes
	// it over only when it is the owner's or expired (the last ? is now);
	// otherwise nothing changes and no row is affected.
	acquireDeviceLockSQL = `INSERT INTO device_locks (project_id, node_id, owner, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (project_id, node_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE device_locks.owner = excluded.owner OR device_locks.expires_at <= ?`
	releaseDeviceLockSQL = `DELETE FROM device_locks WHERE project_id = ? AND node_id = ? AND owner = ?`
)

// checkDeviceLockArgs rejects the arguments that name no lock or no
// holder.
func checkDeviceLockArgs(projectID, nodeID, owner string) error {
	switch {
	case projectID == "":
		return errors.New("empty project id")
	case nodeID == "":
		return errors.New("empty node id")
	case owner == "":
		return errors.New("empty owner")
	}
	return nil
}

// AcquireDeviceLock takes, renews or takes over the device's lock for
// owner until now+ttl in one conditional upsert; see store.DeviceLocks.
// The writer serializes the handles of this process and BEGIN IMMEDIATE
// those of other processes, so of two racing owners one inserts the row
// and the other's conflict update finds it held (no row affected).
func (s *Store) AcquireDeviceLock(ctx context.Context, projectID, nodeID, owner string, ttl time.Duration) error {
	if err := checkDeviceLockArgs(projectID, nodeID, owner); err != nil {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	t, until, err := s.leaseUntil(ttl)
	if err != nil {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	now, err := encTime(t)
	if err != nil {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, acquireDeviceLockSQL, projectID, nodeID, owner, until, now)
		return oneRow(res, err, store.ErrLeaseHeld)
	})
	if err != nil {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	return nil
}

// ReleaseDeviceLock deletes the device's lock if owner holds it; it is a
// no-op otherwise.
func (s *Store) ReleaseDeviceLock(ctx context.Context, projectID, nodeID, owner string) error {
	if checkDeviceLockArgs(projectID, nodeID, owner) != nil {
		return nil // such a lock cannot be held
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, releaseDeviceLockSQL, projectID, nodeID, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("release lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	return nil
}
