package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	"agentchat/internal/store"
)

var _ store.HistoryPager = (*Store)(nil)

// historyQuery reads a session's committed messages below a seq, newest
// first; rows are decoded one at a time, so a page reads no more than it
// returns plus one message.
const historyQuery = `SELECT seq, id, role, content, name, tool_call_id, tool_calls, metadata, created_at
FROM messages WHERE project_id = ? AND thread_id = ? AND seq <= ? AND seq < ? ORDER BY seq DESC LIMIT ?`

// ListHistory implements store.HistoryPager in one read transaction.
func (s *Store) ListHistory(ctx context.Context, k store.Key, p store.HistoryPage) ([]store.Message, bool, error) {
	before := p.Before
	if before <= 0 {
		before = math.MaxInt64
	}
	var (
		out   []store.Message
		more  bool
		bytes int
	)
	err := s.read(ctx, func(tx *sql.Tx) error {
		var committed int64
		err := tx.StmtContext(ctx, s.rs.msgSeq).QueryRowContext(ctx, keyArgs(k)...).Scan(&committed)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		// One row more than the page: it tells whether older ones remain.
		rows, err := tx.QueryContext(ctx, historyQuery, k.ProjectID, k.ThreadID, committed, before, max(p.Limit, 1)+1)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return err
			}
			size := store.MessageSize(&m)
			if !p.Fits(len(out), bytes, size) {
				more = true
				break
			}
			out, bytes = append(out, m), bytes+size
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, fmt.Errorf("list history of session %s: %w", k.ThreadID, err)
	}
	slices.Reverse(out)
	if out == nil {
		out = []store.Message{}
	}
	return out, more, nil
}
