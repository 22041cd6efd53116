package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// sessionCols are the columns scanned by scanSession, in order.
const sessionCols = `project_id, thread_id, user_id, title, title_set_by_user, pinned,
	message_count, llm_calls, input_tokens, output_tokens, total_tokens,
	errors, aborted_turns, turns, tool_calls, metadata,
	last_message_at, created_at, updated_at, cost_nanos, unpriced_calls`

// keyWhere matches one session of its owner; its arguments are keyArgs.
const keyWhere = `project_id = ? AND thread_id = ? AND user_id = ?`

func keyArgs(k store.Key) []any { return []any{k.ProjectID, k.ThreadID, k.UserID} }

type scanner interface{ Scan(dest ...any) error }

// scanSession reads a row of sessionCols, followed by the columns extra
// scans into.
func scanSession(row scanner, extra ...any) (*store.Session, error) {
	var (
		s                         store.Session
		toolCalls, metadata       string
		lastMsg, created, updated string
		titleByUser, pinned       bool
	)
	err := row.Scan(append([]any{&s.ProjectID, &s.ThreadID, &s.UserID, &s.Title, &titleByUser, &pinned,
		&s.MessageCount, &s.LLMCallsCount, &s.InputTokens, &s.OutputTokens, &s.TotalTokens,
		&s.Stats.Errors, &s.Stats.AbortedTurns, &s.Stats.Turns, &toolCalls, &metadata,
		&lastMsg, &created, &updated, &s.Stats.CostNanos, &s.Stats.UnpricedCalls}, extra...)...)
	if err != nil {
		return nil, err
	}
	s.TitleSetByUser, s.Pinned = titleByUser, pinned
	if toolCalls != "" {
		if err := json.Unmarshal([]byte(toolCalls), &s.Stats.ToolCalls); err != nil {
			return nil, fmt.Errorf("decode tool call stats of %s: %w", s.ThreadID, err)
		}
	}
	if metadata != "" {
		if err := json.Unmarshal([]byte(metadata), &s.Metadata); err != nil {
			return nil, fmt.Errorf("decode metadata of %s: %w", s.ThreadID, err)
		}
	}
	if s.LastMessageAt, err = decTime(lastMsg); err != nil {
		return nil, err
	}
	if s.CreatedAt, err = decTime(created); err != nil {
		return nil, err
	}
	if s.UpdatedAt, err = decTime(updated); err != nil {
		return nil, err
	}
	return &s, nil
}

// encJSON encodes a map as JSON text; an empty map is "".
func encJSON[V any](m map[string]V) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func checkKey(k store.Key) error {
	switch {
	case k.ProjectID == "":
		return errors.New("empty project id")
	case k.UserID == "":
		return errors.New("empty user id")
	case k.ThreadID == "":
		return errors.New("empty thread id")
	}
	return nil
}

// CreateSession stores a new session; see store.Sessions. It fills the
// defaults (title, timestamps) into s.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session) error {
	return s.createSession(ctx, sess, "", "")
}

// CreateLeasedSession stores a new session whose turn lease is held by
// owner until now+ttl, with one INSERT; see store.Sessions.
func (s *Store) CreateLeasedSession(ctx context.Context, sess *store.Session, owner string, ttl time.Duration) error {
	if owner == "" {
		return errors.New("create leased session: empty lease owner")
	}
	_, until, err := s.leaseUntil(ttl)
	if err != nil {
		return fmt.Errorf("create leased session: %w", err)
	}
	return s.createSession(ctx, sess, owner, until)
}

var _ store.SeededSessionCreator = (*Store)(nil)

// CreateSeededSession implements store.SeededSessionCreator: the session's
// INSERT (with its lease) and the append of msgs in one write transaction.
func (s *Store) CreateSeededSession(ctx context.Context, sess *store.Session, owner string, ttl time.Duration, msgs []store.Message) ([]store.Message, error) {
	if owner == "" {
		return nil, errors.New("create seeded session: empty lease owner")
	}
	_, until, err := s.leaseUntil(ttl)
	if err != nil {
		return nil, fmt.Errorf("create seeded session: %w", err)
	}
	in, err := s.encodeSession(sess)
	if err != nil {
		return nil, err
	}
	k := sess.Key()
	out, rows, err := s.encodeMessages(k, msgs)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := s.insertSessionTx(ctx, tx, in, owner, until); err != nil {
			return err
		}
		return s.appendTx(ctx, tx, k, out, rows)
	})
	if err != nil {
		return nil, fmt.Errorf("create session %s in project %s: %w", sess.ThreadID, sess.ProjectID, err)
	}
	s.stored(in)
	s.history.appended(threadRef{project: k.ProjectID, thread: k.ThreadID}, out)
	return out, nil
}

// createSession inserts sess with the given lease columns ("" for none).
func (s *Store) createSession(ctx context.Context, sess *store.Session, leaseOwner, leaseUntil string) error {
	in, err := s.encodeSession(sess)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		return s.insertSessionTx(ctx, tx, in, leaseOwner, leaseUntil)
	})
	if err != nil {
		return fmt.Errorf("create session %s in project %s: %w", sess.ThreadID, sess.ProjectID, err)
	}
	s.stored(in)
	return nil
}

// sessionInsert is a session encoded for its insert.
type sessionInsert struct {
	sess             *store.Session
	title            string
	created, updated time.Time
	args             []any // the insert's arguments but the lease columns
	// count is the user's number of sessions with this one, read by the
	// insert's limit check (0: no limit, not read).
	count int64
}

// encodeSession checks and encodes sess for insertSessionTx.
func (s *Store) encodeSession(sess *store.Session) (*sessionInsert, error) {
	if sess == nil {
		return nil, errors.New("create session: nil session")
	}
	if err := checkKey(sess.Key()); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	now := s.now().UTC()
	in := &sessionInsert{sess: sess, title: sess.Title, created: sess.CreatedAt, updated: sess.UpdatedAt}
	if in.title == "" {
		in.title = store.DefaultTitle
	}
	if in.created.IsZero() {
		in.created = now
	}
	if in.updated.IsZero() {
		in.updated = now
	}
	createdText, err := encTime(in.created)
	if err != nil {
		return nil, fmt.Errorf("create session %s: created_at: %w", sess.ThreadID, err)
	}
	updatedText, err := encTime(in.updated)
	if err != nil {
		return nil, fmt.Errorf("create session %s: updated_at: %w", sess.ThreadID, err)
	}
	lastText, err := encTime(sess.LastMessageAt)
	if err != nil {
		return nil, fmt.Errorf("create session %s: last_message_at: %w", sess.ThreadID, err)
	}
	toolCalls, err := encJSON(sess.Stats.ToolCalls)
	if err != nil {
		return nil, fmt.Errorf("create session %s: tool call stats: %w", sess.ThreadID, err)
	}
	metadata, err := encJSON(sess.Metadata)
	if err != nil {
		return nil, fmt.Errorf("create session %s: metadata: %w", sess.ThreadID, err)
	}
	in.args = []any{sess.ProjectID, sess.ThreadID, sess.UserID, in.title, sess.TitleSetByUser, sess.Pinned,
		sess.MessageCount, sess.LLMCallsCount, sess.InputTokens, sess.OutputTokens, sess.TotalTokens,
		sess.Stats.Errors, sess.Stats.AbortedTurns, sess.Stats.Turns, toolCalls, metadata,
		lastText, createdText, updatedText, sess.Stats.CostNanos, sess.Stats.UnpricedCalls}
	return in, nil
}

// insertSessionTx inserts in with the given lease columns; store.ErrExists
// when the thread id is taken, a *store.LimitError (roll tx back) when the
// user would have more sessions than the limit.
func (s *Store) insertSessionTx(ctx context.Context, tx *sql.Tx, in *sessionInsert, leaseOwner, leaseUntil string) error {
	args := append(in.args[:len(in.args):len(in.args)], leaseOwner, leaseUntil)
	res, err := tx.StmtContext(ctx, s.ws.insertSession).ExecContext(ctx, args...)
	if err := oneRow(res, err, store.ErrExists); err != nil {
		return err
	}
	in.count, err = s.sessionsOverLimitTx(ctx, tx, in.sess.UserID)
	return err
}

// stored sets the defaults the insert filled in on the caller's session,
// once its transaction committed, notes the user's number of sessions it
// read for CheckSessionRoom, and starts the session's history cache
// (empty), so that its next turn reads no history and opens it with the
// lease first (openTurn).
func (s *Store) stored(in *sessionInsert) {
	in.sess.Title, in.sess.CreatedAt, in.sess.UpdatedAt = in.title, in.created, in.updated
	s.history.put(threadRef{project: in.sess.ProjectID, thread: in.sess.ThreadID}, 0, nil, true)
	if in.count > 0 {
		s.sessionCounts.put(in.sess.UserID, in.count, s.sessionCounts.generation(), s.now())
	}
}

// GetSession returns the session, or store.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, k store.Key) (*store.Session, error) {
	sess, err := scanSession(s.rs.getSession.QueryRowContext(ctx, keyArgs(k)...))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", k.ThreadID, err)
	}
	return sess, nil
}

// ListSessions lists the user's sessions in the project: pinned first, then
// UpdatedAt descending, then ThreadID descending. With p.CopilotMode it
// filters on the generated copilot_mode column in SQL, through the index
// sessions_by_user_mode (migration 3).
func (s *Store) ListSessions(ctx context.Context, projectID, userID string, p store.Page) ([]store.Session, string, error) {
	if p.Limit < 1 || p.Limit > 1000 {
		return nil, "", fmt.Errorf("list sessions: limit %d not in 1..1000", p.Limit)
	}
	var after *cursor
	if p.Cursor != "" {
		c, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
		after = &c
	}
	q, args := listQuery(projectID, userID, p.CopilotMode, after, p.Limit+1)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, *sess)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	next := ""
	if len(out) > p.Limit {
		out = out[:p.Limit]
		last := out[len(out)-1]
		upd, err := encTime(last.UpdatedAt)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
		next = encodeCursor(cursor{Pinned: last.Pinned, UpdatedAt: upd, ThreadID: last.ThreadID})
	}
	return out, next, nil
}

// listQuery is the SELECT of ListSessions and its arguments: at most limit
// sessions of the user in the project, of copilotMode unless it is empty,
// after the position after (nil: from the start), in listing order.
func listQuery(projectID, userID, copilotMode string, after *cursor, limit int) (string, []any) {
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE project_id = ? AND user_id = ?`
	args := []any{projectID, userID}
	if copilotMode != "" {
		q += ` AND copilot_mode = ?`
		args = append(args, copilotMode)
	}
	if after != nil {
		q += ` AND (pinned, updated_at, thread_id) < (?, ?, ?)`
		args = append(args, after.Pinned, after.UpdatedAt, after.ThreadID)
	}
	q += ` ORDER BY pinned DESC, updated_at DESC, thread_id DESC LIMIT ?`
	return q, append(args, limit)
}

// updateReturning runs an UPDATE ... RETURNING of one session.
func (s *Store) updateReturning(ctx context.Context, what string, k store.Key, set string, args ...any) (*store.Session, error) {
	var sess *store.Session
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		sess, err = scanSession(tx.QueryRowContext(ctx,
			`UPDATE sessions SET `+set+` WHERE `+keyWhere+` RETURNING `+sessionCols,
			append(args, keyArgs(k)...)...))
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s session %s: %w", what, k.ThreadID, err)
	}
	return sess, nil
}

// RenameSession sets the title as the user's own and bumps UpdatedAt.
func (s *Store) RenameSession(ctx context.Context, k store.Key, title string) (*store.Session, error) {
	return s.updateReturning(ctx, "rename", k, `title = ?, title_set_by_user = 1, updated_at = ?`, title, s.nowText())
}

// SetPinned pins or unpins the session and returns it.
func (s *Store) SetPinned(ctx context.Context, k store.Key, pinned bool) (*store.Session, error) {
	return s.updateReturning(ctx, "pin", k, `pinned = ?`, pinned)
}

// SetGeneratedTitle sets a generated title unless the user renamed the
// session; it reports whether the title was written.
func (s *Store) SetGeneratedTitle(ctx context.Context, k store.Key, title string) (bool, error) {
	var written bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		// One prepared statement writes it unless the user set the title;
		// only a miss reads why.
		res, err := tx.StmtContext(ctx, s.ws.setGeneratedTitle).ExecContext(ctx, append([]any{title}, keyArgs(k)...)...)
		if err != nil {
			return err
		}
		if n, err := rowsAffected(res); err != nil || n == 1 {
			written = err == nil
			return err
		}
		var byUser bool
		err = tx.StmtContext(ctx, s.ws.titleSetByUser).QueryRowContext(ctx, keyArgs(k)...).Scan(&byUser)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("set generated title of session %s: %w", k.ThreadID, err)
	}
	return written, nil
}

// reconcileMessageCount is the SET clause by which AcquireLease makes the
// session's message_count the number of its committed messages, in the
// same statement that takes the lease (store.Leases).
//
// A turn's messages are counted by its AddTurnStats, at its end; a turn
// cut before (its process killed) leaves the messages it appended
// committed but uncounted, and nothing else would ever count them. The
// next lease holder counts them here: msg_seq, the commit marker, is the
// number of committed messages, since seqs are handed out one by one from
// 1 in the transaction that commits them, and messages are only ever
// removed with their session or as a trailing run whose seqs the marker
// gives back (RollBackTurn). The cut turn's other counters (LLM calls,
// tokens, tool calls, turns) are not known and stay unwritten: a cut turn
// is counted at most once, never twice. A normal turn wrote its
// AddTurnStats before releasing its lease, so the clause then changes
// nothing.
const reconcileMessageCount = `message_count = msg_seq`

// AddTurnStats increments the session's counters atomically and bumps
// UpdatedAt (and LastMessageAt when set in the delta).
func (s *Store) AddTurnStats(ctx context.Context, k store.Key, d store.TurnStats) error {
	last, err := encTime(d.LastMessageAt)
	if err != nil {
		return fmt.Errorf("add turn stats to session %s: last_message_at: %w", k.ThreadID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		return s.addTurnStatsTx(ctx, tx, k, d, last)
	})
	if err != nil {
		return fmt.Errorf("add turn stats to session %s: %w", k.ThreadID, err)
	}
	return nil
}

// addTurnStatsTx adds d to the session's counters in tx; last is
// d.LastMessageAt encoded. store.ErrNotFound when there is no session.
func (s *Store) addTurnStatsTx(ctx context.Context, tx *sql.Tx, k store.Key, d store.TurnStats, last string) error {
	var toolCallsText string
	err := tx.StmtContext(ctx, s.ws.toolCallStats).QueryRowContext(ctx, keyArgs(k)...).Scan(&toolCallsText)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	if len(d.ToolCalls) > 0 {
		toolCalls := map[string]int64{}
		if toolCallsText != "" {
			if err := json.Unmarshal([]byte(toolCallsText), &toolCalls); err != nil {
				return fmt.Errorf("decode tool call stats: %w", err)
			}
		}
		for name, n := range d.ToolCalls {
			toolCalls[name] += n
		}
		if toolCallsText, err = encJSON(toolCalls); err != nil {
			return fmt.Errorf("encode tool call stats: %w", err)
		}
	}
	_, err = tx.StmtContext(ctx, s.ws.addTurnStats).ExecContext(ctx,
		d.Messages, d.LLMCalls, d.InputTokens, d.OutputTokens, d.InputTokens+d.OutputTokens,
		d.Errors, d.AbortedTurns, d.Turns, toolCallsText, d.CostNanos, d.UnpricedCalls, s.nowText(), last, last,
		k.ProjectID, k.ThreadID, k.UserID)
	return err
}

// DeleteSession removes the session, its messages, turn logs, lease and
// abort flag.
func (s *Store) DeleteSession(ctx context.Context, k store.Key) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE `+keyWhere, keyArgs(k)...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return s.deleteThread(ctx, tx, k.ProjectID, k.ThreadID)
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", k.ThreadID, err)
	}
	return nil
}

// deleteThread removes a thread's messages and turn logs, then its
// session row.
func (s *Store) deleteThread(ctx context.Context, tx *sql.Tx, projectID, threadID string) error {
	s.history.drop(threadRef{project: projectID, thread: threadID})
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE project_id = ? AND thread_id = ?`, projectID, threadID); err != nil {
		return fmt.Errorf("delete messages: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM turn_logs WHERE project_id = ? AND thread_id = ?`, projectID, threadID); err != nil {
		return fmt.Errorf("delete turn logs: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE project_id = ? AND thread_id = ?`, projectID, threadID); err != nil {
		return fmt.Errorf("delete session row: %w", err)
	}
	return nil
}

// deleteProjectBatch is how many threads one DeleteProject transaction
// removes, so that a large project does not hold the writer for long.
const deleteProjectBatch = 50

// DeleteProject removes every session of every user in the project, a batch
// of threads per transaction; running it again finishes a cut-off run.
func (s *Store) DeleteProject(ctx context.Context, projectID string) error {
	for {
		var n int
		err := s.write(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT thread_id FROM sessions WHERE project_id = ? LIMIT ?`, projectID, deleteProjectBatch)
			if err != nil {
				return err
			}
			var threads []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					_ = rows.Close()
					return err
				}
				threads = append(threads, id)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if err := rows.Err(); err != nil {
				return err
			}
			for _, id := range threads {
				if err := s.deleteThread(ctx, tx, projectID, id); err != nil {
					return fmt.Errorf("thread %s: %w", id, err)
				}
			}
			n = len(threads)
			return nil
		})
		if err != nil {
			return fmt.Errorf("delete project %s: %w", projectID, err)
		}
		if n < deleteProjectBatch {
			return s.deleteProjectAudit(ctx, projectID)
		}
	}
}
