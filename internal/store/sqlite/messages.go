package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// AppendMessages appends msgs atomically, assigns their Seq, fills empty IDs
// and zero CreatedAt, and returns them. The messages and the session's
// commit marker (msg_seq) are written in one transaction.
func (s *Store) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	out, rows, err := s.encodeMessages(k, msgs)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		return s.appendTx(ctx, tx, k, out, rows)
	})
	if err != nil {
		return nil, fmt.Errorf("append to session %s: %w", k.ThreadID, err)
	}
	s.history.appended(threadRef{project: k.ProjectID, thread: k.ThreadID}, out)
	return out, nil
}

// messageRow holds the encoded columns of a message to insert.
type messageRow struct{ toolCalls, metadata, created string }

// encodeMessages checks and completes msgs for an append (ids, times) and
// encodes their columns.
func (s *Store) encodeMessages(k store.Key, msgs []store.Message) ([]store.Message, []messageRow, error) {
	out := make([]store.Message, len(msgs))
	rows := make([]messageRow, len(msgs))
	now := s.now().UTC()
	for i, m := range msgs {
		if !store.ValidRole(m.Role) {
			return nil, nil, fmt.Errorf("append to session %s: message %d: unknown role %q", k.ThreadID, i, m.Role)
		}
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		} else {
			m.CreatedAt = m.CreatedAt.UTC()
		}
		var err error
		if rows[i].created, err = encTime(m.CreatedAt); err != nil {
			return nil, nil, fmt.Errorf("append to session %s: message %d: %w", k.ThreadID, i, err)
		}
		if len(m.ToolCalls) > 0 {
			b, err := json.Marshal(m.ToolCalls)
			if err != nil {
				return nil, nil, fmt.Errorf("append to session %s: message %d: tool calls: %w", k.ThreadID, i, err)
			}
			rows[i].toolCalls = string(b)
		}
		if rows[i].metadata, err = encJSON(m.Metadata); err != nil {
			return nil, nil, fmt.Errorf("append to session %s: message %d: metadata: %w", k.ThreadID, i, err)
		}
		out[i] = m
	}
	return out, rows, nil
}

// appendTx appends the encoded messages in tx after the session's last
// one, setting their Seq, and moves the commit marker; store.ErrNotFound
// when the session does not exist.
func (s *Store) appendTx(ctx context.Context, tx *sql.Tx, k store.Key, out []store.Message, rows []messageRow) error {
	var seq int64
	err := tx.StmtContext(ctx, s.ws.msgSeq).QueryRowContext(ctx, keyArgs(k)...).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	stmt := tx.StmtContext(ctx, s.ws.insertMessage)
	for i := range out {
		seq++
		out[i].Seq = seq
		m := &out[i]
		if _, err := stmt.ExecContext(ctx, k.ProjectID, k.ThreadID, seq, m.ID, m.Role, m.Content, m.Name,
			m.ToolCallID, rows[i].toolCalls, rows[i].metadata, rows[i].created); err != nil {
			return fmt.Errorf("insert message %d: %w", i, err)
		}
	}
	_, err = tx.StmtContext(ctx, s.ws.setMsgSeq).ExecContext(ctx, seq, k.ProjectID, k.ThreadID, k.UserID)
	return err
}

// ListMessages returns the last limit committed messages in order (limit
// <= 0 means all).
func (s *Store) ListMessages(ctx context.Context, k store.Key, limit int) ([]store.Message, error) {
	var out []store.Message
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = listMessagesTx(ctx, tx, s.rs.msgSeq, s.rs.listMessages, k, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list messages of session %s: %w", k.ThreadID, err)
	}
	return out, nil
}

// listMessagesTx reads the last limit committed messages in order inside
// tx, with the statements seqStmt (the commit marker) and listStmt
// prepared on tx's database.
func listMessagesTx(ctx context.Context, tx *sql.Tx, seqStmt, listStmt *sql.Stmt, k store.Key, limit int) ([]store.Message, error) {
	var committed int64
	err := tx.StmtContext(ctx, seqStmt).QueryRowContext(ctx, keyArgs(k)...).Scan(&committed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return listCommittedTx(ctx, tx, listStmt, k, committed, limit)
}

// listCommittedTx reads in tx, with listStmt, the last limit messages up
// to the commit marker committed, in order.
func listCommittedTx(ctx context.Context, tx *sql.Tx, listStmt *sql.Stmt, k store.Key, committed int64, limit int) ([]store.Message, error) {
	n := int64(-1) // SQLite: a negative LIMIT is no limit
	if limit > 0 {
		n = int64(limit)
	}
	rows, err := tx.StmtContext(ctx, listStmt).QueryContext(ctx, k.ProjectID, k.ThreadID, committed, n)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []store.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// scanMessage decodes the row of a message query (listMessagesQuery's
// columns).
func scanMessage(row scanner) (store.Message, error) {
	var (
		m                            store.Message
		toolCalls, metadata, created string
	)
	if err := row.Scan(&m.Seq, &m.ID, &m.Role, &m.Content, &m.Name, &m.ToolCallID, &toolCalls, &metadata, &created); err != nil {
		return m, err
	}
	if toolCalls != "" {
		if err := json.Unmarshal([]byte(toolCalls), &m.ToolCalls); err != nil {
			return m, fmt.Errorf("decode tool calls of message %d: %w", m.Seq, err)
		}
	}
	if metadata != "" {
		if err := json.Unmarshal([]byte(metadata), &m.Metadata); err != nil {
			return m, fmt.Errorf("decode metadata of message %d: %w", m.Seq, err)
		}
	}
	var err error
	if m.CreatedAt, err = decTime(created); err != nil {
		return m, err
	}
	return m, nil
}
