package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// auditCols are the columns of an audit entry, in scan order.
const auditCols = `id, project_id, user_id, thread_id, turn_id, at, tool, arguments, summary, status, decision, decided_by, snapshot_id`

// AppendAudit implements store.AuditLog with one INSERT (never an update:
// the log is append-only).
func (s *Store) AppendAudit(ctx context.Context, e *store.AuditEntry) error {
	if err := store.PrepareAudit(e, s.now(), uuid.NewString); err != nil {
		return err
	}
	at, err := encTime(e.Time)
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (sk, `+auditCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			store.AuditSortKey(e), e.ID, e.ProjectID, e.UserID, e.ThreadID, e.TurnID, at, e.Tool, e.Arguments, e.Summary,
			e.Status, e.Decision, e.DecidedBy, e.SnapshotID)
		if err != nil {
			return fmt.Errorf("append audit entry of %s: %w", e.ProjectID, err)
		}
		return nil
	})
}

// ListAudit implements store.AuditLog: one query on the primary key (all
// users) or on audit_log_by_user, descending, one row beyond the page.
func (s *Store) ListAudit(ctx context.Context, projectID, userID string, p store.Page) ([]store.AuditEntry, string, error) {
	if p.Limit < 1 || p.Limit > 1000 {
		return nil, "", fmt.Errorf("list audit: page limit %d out of range 1..1000", p.Limit)
	}
	q := `SELECT sk, ` + auditCols + ` FROM audit_log WHERE project_id = ?`
	args := []any{projectID}
	if userID != "" {
		q += ` AND user_id = ?`
		args = append(args, userID)
	}
	if p.Cursor != "" {
		after, err := store.DecodeAuditCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		q += ` AND sk < ?`
		args = append(args, after)
	}
	q += ` ORDER BY sk DESC LIMIT ?`
	args = append(args, p.Limit+1)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list audit of %s: %w", projectID, err)
	}
	defer func() { _ = rows.Close() }()
	out := []store.AuditEntry{}
	var sks []string
	for rows.Next() {
		var (
			e      store.AuditEntry
			sk, at string
		)
		if err := rows.Scan(&sk, &e.ID, &e.ProjectID, &e.UserID, &e.ThreadID, &e.TurnID, &at, &e.Tool, &e.Arguments,
			&e.Summary, &e.Status, &e.Decision, &e.DecidedBy, &e.SnapshotID); err != nil {
			return nil, "", fmt.Errorf("list audit of %s: %w", projectID, err)
		}
		if e.Time, err = decTime(at); err != nil {
			return nil, "", fmt.Errorf("list audit of %s: %w", projectID, err)
		}
		out = append(out, e)
		sks = append(sks, sk)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list audit of %s: %w", projectID, err)
	}
	if len(out) <= p.Limit {
		return out, "", nil
	}
	return out[:p.Limit], store.EncodeAuditCursor(sks[p.Limit-1]), nil
}

// deleteProjectAudit removes the project's audit entries (DeleteProject).
func (s *Store) deleteProjectAudit(ctx context.Context, projectID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM audit_log WHERE project_id = ?`, projectID); err != nil {
			return fmt.Errorf("delete audit of %s: %w", projectID, err)
		}
		return nil
	})
}
