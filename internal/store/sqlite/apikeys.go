package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

const apiKeyCols = `id, user_id, name, hash, prefix, created_at, expires_at, revoked_at, last_used, max_parallel, rpm, tpm, budget_nanos, budget_period`

func scanAPIKey(row scanner) (*store.APIKey, error) {
	var (
		k                                  store.APIKey
		created, expires, revoked, lastUse string
	)
	if err := row.Scan(&k.ID, &k.UserID, &k.Name, &k.Hash, &k.Prefix, &created, &expires, &revoked, &lastUse,
		&k.Limits.MaxParallel, &k.Limits.RPM, &k.Limits.TPM, &k.Limits.Budget.MaxNanos, &k.Limits.Budget.Period); err != nil {
		return nil, err
	}
	var err error
	if k.CreatedAt, err = decTime(created); err != nil {
		return nil, err
	}
	if k.ExpiresAt, err = decTime(expires); err != nil {
		return nil, err
	}
	if k.RevokedAt, err = decTime(revoked); err != nil {
		return nil, err
	}
	if k.LastUsed, err = decTime(lastUse); err != nil {
		return nil, err
	}
	return &k, nil
}

// CreateAPIKey stores a new key; store.ErrExists when its id or hash is
// already stored, a *store.LimitError when the user would have more active
// keys than the limit (WithLimits). A zero CreatedAt is set to now (and filled into k).
func (s *Store) CreateAPIKey(ctx context.Context, k *store.APIKey) error {
	if k == nil {
		return errors.New("create api key: nil key")
	}
	if k.ID == "" || k.UserID == "" || k.Hash == "" {
		return errors.New("create api key: id, user id and hash are required")
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = s.now().UTC()
	}
	var times [4]string
	for i, t := range []time.Time{k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.LastUsed} {
		var err error
		if times[i], err = encTime(t); err != nil {
			return fmt.Errorf("create api key %s: %w", k.ID, err)
		}
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`, k.ID, k.UserID, k.Name, k.Hash, k.Prefix, times[0], times[1], times[2], times[3],
			k.Limits.MaxParallel, k.Limits.RPM, k.Limits.TPM, k.Limits.Budget.MaxNanos, k.Limits.Budget.Period)
		if err := oneRow(res, err, store.ErrExists); err != nil {
			return err
		}
		return s.apiKeysOverLimitTx(ctx, tx, k.UserID)
	})
	if err != nil {
		return fmt.Errorf("create api key %s: %w", k.ID, err)
	}
	return nil
}

// ListAPIKeys lists a user's keys, newest first (revoked ones included).
func (s *Store) ListAPIKeys(ctx context.Context, userID string) ([]store.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE user_id = ? ORDER BY created_at DESC, id DESC`, userID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		out = append(out, *k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

// RevokeAPIKey marks the user's key revoked (keeping the first revocation
// time); store.ErrNotFound when the user has no such key.
func (s *Store) RevokeAPIKey(ctx context.Context, userID, keyID string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = CASE WHEN revoked_at = '' THEN ? ELSE revoked_at END
WHERE id = ? AND user_id = ?`, s.nowText(), keyID, userID)
		return oneRow(res, err, store.ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", keyID, err)
	}
	return nil
}

// APIKeyByHash returns the key with that hash, or store.ErrNotFound.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	// Not prepared in Open: a store opened at an older schema (before the
	// limits' columns) must still open.
	k, err := scanAPIKey(s.r.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("api key by hash: %w", err)
	}
	return k, nil
}

// TouchAPIKey records that the user's key was used at t: last_used becomes t
// unless it is already at or after t (it only moves forward).
// store.ErrNotFound when the user has no such key.
func (s *Store) TouchAPIKey(ctx context.Context, userID, keyID string, t time.Time) error {
	if t.IsZero() {
		return fmt.Errorf("touch api key %s: zero time", keyID)
	}
	at, err := encTime(t)
	if err != nil {
		return fmt.Errorf("touch api key %s: %w", keyID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		// Stored times are fixed width, so text order is time order ('' first).
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used = CASE WHEN last_used < ? THEN ? ELSE last_used END
WHERE id = ? AND user_id = ?`, at, at, keyID, userID)
		return oneRow(res, err, store.ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("touch api key %s: %w", keyID, err)
	}
	return nil
}
