package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"agentchat/internal/store"
)

// WithLimits makes the store enforce l (store.Limits): a creation that
// would pass a limit fails with a *store.LimitError and writes nothing.
//
// Each creation inserts its row, then counts the owner's rows in the same
// write transaction (BEGIN IMMEDIATE: one writer at a time, also across
// processes), and rolls back when the count is past the limit; so the
// count is exact under concurrency and a limit is never passed. A count
// reads at most limit+1 index entries (llm_configs_by_owner,
// api_keys_by_user); a user's sessions are counted by triggers
// (user_session_counts, migration 13), so that their check reads one row.
func WithLimits(l store.Limits) Option {
	return func(s *Store) { s.limits = l }
}

// overLimitTx fails with a *store.LimitError when the rows that query
// selects (with args, already including the one just inserted) are more
// than limit; a limit <= 0 is no limit. query selects one column and is
// wrapped in a LIMIT, so that no more than limit+1 rows are counted.
func overLimitTx(ctx context.Context, tx *sql.Tx, limit int, res store.Resource, query string, args ...any) error {
	if limit <= 0 {
		return nil
	}
	var n int64
	args = append(args, limit+1)
	if err := tx.QueryRowContext(ctx, limitQuery(query), args...).Scan(&n); err != nil {
		return fmt.Errorf("count %s: %w", res, err)
	}
	if n > int64(limit) {
		return &store.LimitError{Resource: res, Limit: limit}
	}
	return nil
}

// The rows the limits count, each one index range.
const (
	limitLLMConfigsQuery = `SELECT 1 FROM llm_configs WHERE owner_kind = ? AND owner_id = ?`
	limitAPIKeysQuery    = `SELECT 1 FROM api_keys WHERE user_id = ? AND revoked_at = '' AND (expires_at = '' OR expires_at > ?)`
)

// limitQuery wraps one of the queries above: it counts at most limit+1
// rows (the last argument).
func limitQuery(q string) string { return `SELECT COUNT(*) FROM (` + q + ` LIMIT ?)` }

// sessionCountQuery reads a user's number of sessions, kept by the
// triggers of migration 13; a user without a row has none.
const sessionCountQuery = `SELECT sessions FROM user_session_counts WHERE user_id = ?`

// sessionCount is the number of sessions of the user that q (the prepared
// sessionCountQuery) reads.
func sessionCount(ctx context.Context, q *sql.Stmt, userID string) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, userID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// sessionsOverLimitTx checks the user's sessions (the one just inserted
// among them) against the limit, and returns their number (0 without a
// limit: not read).
func (s *Store) sessionsOverLimitTx(ctx context.Context, tx *sql.Tx, userID string) (int64, error) {
	limit := s.limits.SessionsPerUser
	if limit <= 0 {
		return 0, nil
	}
	n, err := sessionCount(ctx, tx.StmtContext(ctx, s.ws.sessionCount), userID)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", store.ResourceSessions, err)
	}
	if n > int64(limit) {
		return 0, &store.LimitError{Resource: store.ResourceSessions, Limit: limit}
	}
	return n, nil
}

// llmConfigsOverLimitTx checks the owner's configurations against the limit.
func (s *Store) llmConfigsOverLimitTx(ctx context.Context, tx *sql.Tx, kind, ownerID string) error {
	return overLimitTx(ctx, tx, s.limits.LLMConfigsPerOwner, store.ResourceLLMConfigs, limitLLMConfigsQuery, kind, ownerID)
}

// apiKeysOverLimitTx checks the user's active keys (neither revoked nor
// expired at now) against the limit.
func (s *Store) apiKeysOverLimitTx(ctx context.Context, tx *sql.Tx, userID string) error {
	return overLimitTx(ctx, tx, s.limits.APIKeysPerUser, store.ResourceAPIKeys, limitAPIKeysQuery, userID, s.nowText())
}

var _ store.SessionRoom = (*Store)(nil)

// CheckSessionRoom implements store.SessionRoom with at most one read of
// the user's session count.
//
// A number of sessions read (or counted by this Store's last creation of
// one of the user's sessions) less than readTTL ago that leaves room is
// trusted without reading the file: the check sits on the way to a new
// session's first token, and a read costs about 40 us there (make
// bench-e2e's project-new). What it may miss are the sessions another
// process created meanwhile; the creation's own check, in its
// transaction, still refuses those (the turn then ends with an error
// event instead of this status). A cached number without room is always
// read again: a session deleted since would leave room, and nobody is
// refused on a stale count.
func (s *Store) CheckSessionRoom(ctx context.Context, userID string) error {
	limit := s.limits.SessionsPerUser
	if limit <= 0 {
		return nil
	}
	now := s.now()
	if n, hit := s.sessionCounts.get(userID, now); hit && n < int64(limit) {
		return nil
	}
	gen := s.sessionCounts.generation()
	n, err := sessionCount(ctx, s.rs.sessionCount, userID)
	if err != nil {
		return fmt.Errorf("count the sessions of a user: %w", err)
	}
	s.sessionCounts.put(userID, n, gen, now)
	if n >= int64(limit) {
		return &store.LimitError{Resource: store.ResourceSessions, Limit: limit}
	}
	return nil
}
