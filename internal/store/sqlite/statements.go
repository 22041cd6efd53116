package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// Hot statements are prepared once, in Open, so that SQLite does not parse
// them on every call. A *sql.Stmt prepared on a *sql.DB is prepared lazily
// on each pool connection it runs on and kept there; the driver keeps the
// compiled SQLite statement and only resets it between runs.

// readStmts are the hot queries, prepared on the reader pool.
type readStmts struct {
	getSession     *sql.Stmt
	abortRequested *sql.Stmt
	// msgSeq and listMessages run inside a read transaction, through
	// tx.StmtContext.
	msgSeq       *sql.Stmt
	listMessages *sql.Stmt
	// turnLogSession, latestTurn, turnEvents and turnTail serve ReadTurnEvents,
	// in one read transaction.
	turnLogSession *sql.Stmt
	latestTurn     *sql.Stmt
	turnEvents     *sql.Stmt
	turnTail       *sql.Stmt
	// sessionCount reads a user's number of sessions (CheckSessionRoom).
	sessionCount *sql.Stmt
}

func (r *readStmts) defs() []stmtDef {
	return []stmtDef{
		{"get session", &r.getSession, getSessionQuery},
		{"abort requested", &r.abortRequested, `SELECT abort_requested FROM sessions WHERE ` + keyWhere},
		{"read msg seq", &r.msgSeq, `SELECT msg_seq FROM sessions WHERE ` + keyWhere},
		{"list messages", &r.listMessages, listMessagesQuery},
		{"turn log session", &r.turnLogSession, turnLogSessionQuery},
		{"latest turn", &r.latestTurn, latestTurnQuery},
		{"turn events", &r.turnEvents, turnEventsQuery},
		{"turn tail", &r.turnTail, turnTailQuery},
		{"session count", &r.sessionCount, sessionCountQuery},
	}
}

// writeStmts are the hot writes, prepared on the writer (one connection).
// They must only run inside a write transaction, through tx.StmtContext,
// which reuses the statement already prepared on the transaction's
// connection. Running one directly on the writer pool while a transaction
// holds its only connection would deadlock. (Statements prepared on a
// dedicated *sql.Conn would not help: tx.StmtContext re-prepares those on
// every call.)
type writeStmts struct {
	insertSession *sql.Stmt
	acquireLease  *sql.Stmt
	renewLease    *sql.Stmt
	releaseLease  *sql.Stmt
	requestAbort  *sql.Stmt
	msgSeq        *sql.Stmt
	insertMessage *sql.Stmt
	setMsgSeq     *sql.Stmt
	toolCallStats *sql.Stmt
	addTurnStats  *sql.Stmt
	// openLease opens a turn (OpenTurn); listMessages reads inside the
	// write transaction of OpenTurn and of a rollback.
	openLease    *sql.Stmt
	listMessages *sql.Stmt
	// appendTurnEvents writes a batch of a turn's log (AppendTurnEvents).
	appendTurnEvents *sql.Stmt
	// sessionCount checks the sessions limit after an insert.
	sessionCount *sql.Stmt
	// leaseState explains a lease not taken (leaseRefusal): every turn
	// that creates its session with a client-made id reads it.
	leaseState *sql.Stmt
	// setGeneratedTitle and titleSetByUser write a new session's title
	// (SetGeneratedTitle, once per new session).
	setGeneratedTitle *sql.Stmt
	titleSetByUser    *sql.Stmt
}

func (w *writeStmts) defs() []stmtDef {
	return []stmtDef{
		// A conflict inserts nothing: the caller reports store.ErrExists.
		{"insert session", &w.insertSession, `INSERT INTO sessions (` + sessionCols + `, lease_owner, lease_until)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id, thread_id) DO NOTHING`},
		{"acquire lease", &w.acquireLease, acquireLeaseSQL},
		// The lease of a turn's opening, returning what the turn reads
		// next: the session, its commit marker and the id of the message
		// at it (NULL when none), which tells whether the cached history
		// is current (historyAt).
		{"open lease", &w.openLease, acquireLeaseSQL + `
RETURNING ` + sessionCols + `, msg_seq,
	(SELECT m.id FROM messages m WHERE m.project_id = sessions.project_id AND m.thread_id = sessions.thread_id
		AND m.seq = sessions.msg_seq)`},
		{"renew lease", &w.renewLease, `UPDATE sessions SET lease_until = ? WHERE ` + keyWhere + ` AND lease_owner = ?`},
		{"release lease", &w.releaseLease, `UPDATE sessions SET lease_owner = '', lease_until = '' WHERE ` + keyWhere + ` AND lease_owner = ?`},
		// A repeated request keeps the time of the first one.
		{"request abort", &w.requestAbort, `UPDATE sessions SET abort_requested = 1,
	abort_at = CASE WHEN abort_requested = 1 AND abort_at <> '' THEN abort_at ELSE ? END
WHERE ` + keyWhere},
		{"write msg seq", &w.msgSeq, `SELECT msg_seq FROM sessions WHERE ` + keyWhere},
		{"insert message", &w.insertMessage, `INSERT INTO messages
	(project_id, thread_id, seq, id, role, content, name, tool_call_id, tool_calls, metadata, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{"set msg seq", &w.setMsgSeq, `UPDATE sessions SET msg_seq = ? WHERE ` + keyWhere},
		{"tool call stats", &w.toolCallStats, `SELECT tool_calls FROM sessions WHERE ` + keyWhere},
		{"add turn stats", &w.addTurnStats, `UPDATE sessions SET
	message_count = message_count + ?, llm_calls = llm_calls + ?,
	input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, total_tokens = total_tokens + ?,
	errors = errors + ?, aborted_turns = aborted_turns + ?, turns = turns + ?,
	tool_calls = ?, cost_nanos = cost_nanos + ?, unpriced_calls = unpriced_calls + ?, updated_at = ?,
	last_message_at = CASE WHEN ? = '' THEN last_message_at ELSE ? END
WHERE ` + keyWhere},
		{"list messages (writer)", &w.listMessages, listMessagesQuery},
		{"append turn events", &w.appendTurnEvents, appendTurnEventsSQL},
		{"session count (writer)", &w.sessionCount, sessionCountQuery},
		{"set generated title", &w.setGeneratedTitle, `UPDATE sessions SET title = ? WHERE ` + keyWhere + ` AND title_set_by_user = 0`},
		{"title set by user", &w.titleSetByUser, `SELECT title_set_by_user FROM sessions WHERE ` + keyWhere},
		{"lease state", &w.leaseState, `SELECT lease_owner, lease_until, abort_requested, abort_at FROM sessions WHERE ` + keyWhere},
	}
}

// acquireLeaseSQL takes a session's lease: it is free, the owner's,
// expired, or its holder ignored an abort requested at or before the
// grace cutoff (the last ?). The new holder reconciles the message count
// (see reconcileMessageCount). Arguments: owner, until, keyArgs, owner,
// now, cutoff.
const acquireLeaseSQL = `UPDATE sessions SET lease_owner = ?, lease_until = ?, abort_requested = 0, abort_at = '',
	` + reconcileMessageCount + `
WHERE ` + keyWhere + ` AND (lease_owner = '' OR lease_owner = ? OR lease_until <= ?
	OR (abort_requested = 1 AND abort_at <> '' AND abort_at <= ?))`

// The queries prepared on both the reader pool and the writer.
const (
	getSessionQuery = `SELECT ` + sessionCols + ` FROM sessions WHERE ` + keyWhere
	// A negative LIMIT is no limit.
	listMessagesQuery = `SELECT seq, id, role, content, name, tool_call_id, tool_calls, metadata, created_at
FROM messages WHERE project_id = ? AND thread_id = ? AND seq <= ? ORDER BY seq DESC LIMIT ?`
)

// stmtDef is a statement to prepare into a field.
type stmtDef struct {
	name  string
	dst   **sql.Stmt
	query string
}

// prepareAll prepares every statement of defs on db; on error it closes
// the ones already prepared.
func prepareAll(ctx context.Context, db *sql.DB, defs []stmtDef) error {
	for _, d := range defs {
		st, err := db.PrepareContext(ctx, d.query)
		if err != nil {
			_ = closeAll(defs)
			return fmt.Errorf("prepare %s: %w", d.name, err)
		}
		*d.dst = st
	}
	return nil
}

// closeAll closes the prepared statements of defs. The fields keep the
// closed statements, which return an error when used.
func closeAll(defs []stmtDef) error {
	var errs []error
	for _, d := range defs {
		if *d.dst == nil {
			continue
		}
		if err := (*d.dst).Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s statement: %w", d.name, err))
		}
	}
	return errors.Join(errs...)
}

// lazyStmt is a hot query prepared on the reader pool at its first use
// rather than in Open: it reads a table that a store opened at an older
// schema (by the migration tests) does not have.
type lazyStmt struct {
	name  string
	query string
	mu    sync.Mutex
	st    *sql.Stmt
}

// get returns the prepared statement, preparing it on db the first time.
// A failed preparation is tried again at the next call.
func (l *lazyStmt) get(ctx context.Context, db *sql.DB) (*sql.Stmt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return l.st, nil
	}
	st, err := db.PrepareContext(ctx, l.query)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", l.name, err)
	}
	l.st = st
	return st, nil
}

// close closes the statement if it was prepared.
func (l *lazyStmt) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		return nil
	}
	err := l.st.Close()
	l.st = nil
	if err != nil {
		return fmt.Errorf("close %s statement: %w", l.name, err)
	}
	return nil
}
