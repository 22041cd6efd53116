package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// sessionExists reports whether the caller's session exists, inside tx.
func sessionExists(ctx context.Context, tx *sql.Tx, k store.Key) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE `+keyWhere, keyArgs(k)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// leaseUntil is the stored expiry of a lease taken now for ttl, with now
// itself.
func (s *Store) leaseUntil(ttl time.Duration) (now time.Time, until string, err error) {
	if ttl <= 0 {
		return time.Time{}, "", fmt.Errorf("lease ttl %v is not positive", ttl)
	}
	t := s.now()
	until, err = encTime(t.Add(ttl))
	if err != nil {
		return time.Time{}, "", err
	}
	return t, until, nil
}

// AcquireLease takes the session's turn lease for owner until now+ttl and
// clears the abort flag; see store.Leases (AbortGrace included).
func (s *Store) AcquireLease(ctx context.Context, k store.Key, owner string, ttl time.Duration) error {
	if owner == "" {
		return fmt.Errorf("acquire lease on session %s: empty owner", k.ThreadID)
	}
	t, until, err := s.leaseUntil(ttl)
	if err != nil {
		return fmt.Errorf("acquire lease on session %s: %w", k.ThreadID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		return s.acquireLeaseTx(ctx, tx, k, owner, t, until)
	})
	if err != nil {
		return fmt.Errorf("acquire lease on session %s: %w", k.ThreadID, err)
	}
	return nil
}

// acquireLeaseTx takes the lease in tx (see AcquireLease) at now until
// until (leaseUntil's results).
func (s *Store) acquireLeaseTx(ctx context.Context, tx *sql.Tx, k store.Key, owner string, now time.Time, until string) error {
	res, err := tx.StmtContext(ctx, s.ws.acquireLease).ExecContext(ctx, leaseArgs(k, owner, now, until)...)
	if err != nil {
		return err
	}
	if n, err := rowsAffected(res); err != nil || n == 1 {
		return err
	}
	return s.leaseRefusal(ctx, tx, k)
}

// leaseArgs are the arguments of acquireLeaseSQL: owner takes k's lease
// at now until until.
func leaseArgs(k store.Key, owner string, now time.Time, until string) []any {
	return []any{owner, until, k.ProjectID, k.ThreadID, k.UserID, owner,
		now.UTC().Format(timeLayout), now.Add(-store.AbortGrace).UTC().Format(timeLayout)}
}

// RenewLease extends the owner's lease to now+ttl; store.ErrLeaseLost when
// another owner holds it or it was released.
func (s *Store) RenewLease(ctx context.Context, k store.Key, owner string, ttl time.Duration) error {
	if owner == "" {
		return fmt.Errorf("renew lease on session %s: empty owner", k.ThreadID)
	}
	_, until, err := s.leaseUntil(ttl)
	if err != nil {
		return fmt.Errorf("renew lease on session %s: %w", k.ThreadID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.ws.renewLease).ExecContext(ctx,
			until, k.ProjectID, k.ThreadID, k.UserID, owner)
		if err != nil {
			return err
		}
		return explainMiss(ctx, tx, k, res, store.ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("renew lease on session %s: %w", k.ThreadID, err)
	}
	return nil
}

// ReleaseLease frees the owner's lease; it is a no-op when owner does not
// hold it.
func (s *Store) ReleaseLease(ctx context.Context, k store.Key, owner string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.ws.releaseLease).ExecContext(ctx,
			k.ProjectID, k.ThreadID, k.UserID, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("release lease on session %s: %w", k.ThreadID, err)
	}
	return nil
}

// RequestAbort sets the session's abort flag and records the time of the
// first pending request.
func (s *Store) RequestAbort(ctx context.Context, k store.Key) error {
	args := append([]any{s.nowText()}, keyArgs(k)...)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.ws.requestAbort).ExecContext(ctx, args...)
		return oneRow(res, err, store.ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("request abort of session %s: %w", k.ThreadID, err)
	}
	return nil
}

// AbortRequested reports whether the abort flag is set; store.ErrNotFound
// when the session does not exist.
func (s *Store) AbortRequested(ctx context.Context, k store.Key) (bool, error) {
	var ab bool
	err := s.rs.abortRequested.QueryRowContext(ctx, keyArgs(k)...).Scan(&ab)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return false, fmt.Errorf("read abort flag of session %s: %w", k.ThreadID, err)
	}
	return ab, nil
}

// explainMiss returns nil when the lease update res changed the session's
// row, else store.ErrNotFound when the session does not exist, else miss.
func explainMiss(ctx context.Context, tx *sql.Tx, k store.Key, res sql.Result, miss error) error {
	if n, err := rowsAffected(res); err != nil || n == 1 {
		return err
	}
	ok, err := sessionExists(ctx, tx, k)
	switch {
	case err != nil:
		return err
	case !ok:
		return store.ErrNotFound
	}
	return miss
}

// leaseRefusal tells why an acquisition of the lease changed no row:
// store.ErrNotFound when the session does not exist, else a
// *store.LeaseHeldError telling until when the lease is held (read in tx,
// so it is the lease that refused the acquisition).
func (s *Store) leaseRefusal(ctx context.Context, tx *sql.Tx, k store.Key) error {
	var (
		owner, untilText, abortAtText string
		aborted                       bool
	)
	err := tx.StmtContext(ctx, s.ws.leaseState).QueryRowContext(ctx, keyArgs(k)...).
		Scan(&owner, &untilText, &aborted, &abortAtText)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("read the held lease: %w", err)
	}
	until, err := decTime(untilText)
	if err != nil {
		return fmt.Errorf("read the held lease: %w", err)
	}
	if aborted && abortAtText != "" {
		at, err := decTime(abortAtText)
		if err != nil {
			return fmt.Errorf("read the held lease: %w", err)
		}
		if free := at.Add(store.AbortGrace); free.Before(until) {
			until = free
		}
	}
	return &store.LeaseHeldError{Until: until, Owner: owner}
}
