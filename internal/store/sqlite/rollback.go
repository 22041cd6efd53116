package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"agentchat/internal/store"
)

var _ store.TurnRollbacks = (*Store)(nil)

// RollBackTurn implements store.TurnRollbacks in one write transaction:
// it reads the commit marker (msg_seq), the trailing run of messages
// tagged with turn, deletes them, moves the marker back to the seq before
// the run and lowers message_count by their number (not below 0). Seqs
// stay dense, so msg_seq remains the number of committed messages (see
// reconcileMessageCount) and later appends reuse the freed seqs. An empty
// turn matches no message.
//
// The history cache entry of the session is dropped when messages were
// removed. Another Store on the same file (another process) keeps its
// entry, which its OpenTurn then rejects: the marker moved back, and once
// appends reach it again the message at the marker is a new one, with
// another id.
func (s *Store) RollBackTurn(ctx context.Context, k store.Key, turn string) (int, error) {
	var n int
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.rollBackTx(ctx, tx, k, turn)
		return err
	})
	if n > 0 || err != nil {
		s.history.drop(threadRef{project: k.ProjectID, thread: k.ThreadID})
	}
	if err != nil {
		return 0, fmt.Errorf("roll back turn %s of session %s: %w", turn, k.ThreadID, err)
	}
	return n, nil
}

// rollBackTx removes, in tx, the trailing run of the session's messages
// tagged with turn and returns how many it removed.
func (s *Store) rollBackTx(ctx context.Context, tx *sql.Tx, k store.Key, turn string) (int, error) {
	var seq int64
	err := tx.StmtContext(ctx, s.ws.msgSeq).QueryRowContext(ctx, keyArgs(k)...).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	if turn == "" || seq == 0 {
		return 0, nil
	}
	first, err := s.trailingRun(ctx, tx, k, seq, turn)
	if err != nil || first > seq {
		return 0, err
	}
	n := seq - first + 1
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE project_id = ? AND thread_id = ? AND seq >= ?`,
		k.ProjectID, k.ThreadID, first); err != nil {
		return 0, fmt.Errorf("delete messages %d..%d: %w", first, seq, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET msg_seq = ?, message_count = MAX(0, message_count - ?) WHERE `+keyWhere,
		append([]any{first - 1, n}, keyArgs(k)...)...); err != nil {
		return 0, fmt.Errorf("move the commit marker back to %d: %w", first-1, err)
	}
	return int(n), nil
}

// trailingRun returns the seq of the first message of the run of messages
// tagged with turn that ends at the commit marker seq (seq+1 when the last
// message is not turn's). The messages are read from the last one back
// and decoded one at a time, so it reads one message past the run.
func (s *Store) trailingRun(ctx context.Context, tx *sql.Tx, k store.Key, seq int64, turn string) (int64, error) {
	rows, err := tx.StmtContext(ctx, s.ws.listMessages).QueryContext(ctx, k.ProjectID, k.ThreadID, seq, -1)
	if err != nil {
		return 0, fmt.Errorf("read the last messages: %w", err)
	}
	defer func() { _ = rows.Close() }()
	first := seq + 1
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return 0, fmt.Errorf("read the last messages: %w", err)
		}
		if m.Seq != first-1 || m.TurnOf() != turn {
			break
		}
		first = m.Seq
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read the last messages: %w", err)
	}
	return first, nil
}
