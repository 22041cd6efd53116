package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// SetAPIKeyLimits implements store.APIKeyLimits.
func (s *Store) SetAPIKeyLimits(ctx context.Context, userID, keyID string, l store.KeyLimits) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET max_parallel = ?, rpm = ?, tpm = ?, budget_nanos = ?, budget_period = ? WHERE user_id = ? AND id = ?`,
			l.MaxParallel, l.RPM, l.TPM, l.Budget.MaxNanos, l.Budget.Period, userID, keyID)
		return oneRow(res, err, store.ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("set limits of api key %s: %w", keyID, err)
	}
	return nil
}

// AddRate implements store.RateCounters with one conditional upsert; the
// name's windows that ended more than ttl ago are deleted when a new
// window starts.
func (s *Store) AddRate(ctx context.Context, name string, window time.Time, n, limit int64, ttl time.Duration) (int64, bool, error) {
	win := window.Unix()
	expires := window.Add(ttl).Unix()
	var count int64
	added := true
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO rate_counters (name, win_start, count, expires) VALUES (?, ?, ?, ?)
ON CONFLICT (name, win_start) DO UPDATE SET count = count + excluded.count
WHERE ? <= 0 OR count < ?
RETURNING count`, name, win, n, expires, limit, limit).Scan(&count)
		if errors.Is(err, sql.ErrNoRows) {
			added = false
			return tx.QueryRowContext(ctx, `SELECT count FROM rate_counters WHERE name = ? AND win_start = ?`, name, win).Scan(&count)
		}
		if err != nil {
			return err
		}
		if count == n { // a new window: drop the name's old ones
			_, err = tx.ExecContext(ctx, `DELETE FROM rate_counters WHERE name = ? AND expires < ?`, name, win)
		}
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("add to rate counter %s: %w", name, err)
	}
	return count, added, nil
}
