package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// Turn logs (store.TurnLogs) are rows of turn_logs, one per batch, keyed
// by (project, thread, turn, number of the batch's last event). A batch
// without events has the key of the batch before it (first-1; 0 for the
// marker that starts a turn): it only marks that row final (or creates it
// when there is none), so a turn may end with an empty Final batch.

// turnLogPurgeEvery is how often, at most, an append purges the expired
// rows of every session (one indexed DELETE).
const turnLogPurgeEvery = 5 * time.Minute

const (
	// appendTurnEventsSQL writes a batch in one statement, only if the
	// session exists (a late append racing the session's deletion writes
	// nothing: both run on the single writer). A batch written again (a
	// retry) replaces its row; an empty batch keeps the row's events and
	// only adds its final flag and expiry.
	appendTurnEventsSQL = `INSERT INTO turn_logs (project_id, thread_id, turn_id, last_seq, first_seq, data, final, expires_at)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
WHERE EXISTS (SELECT 1 FROM sessions WHERE project_id = ?1 AND thread_id = ?2 AND user_id = ?9)
ON CONFLICT (project_id, thread_id, turn_id, last_seq) DO UPDATE SET
	final = MAX(final, excluded.final),
	expires_at = MAX(expires_at, excluded.expires_at),
	first_seq = CASE WHEN excluded.first_seq > excluded.last_seq THEN first_seq ELSE excluded.first_seq END,
	data = CASE WHEN excluded.first_seq > excluded.last_seq THEN data ELSE excluded.data END`
	turnLogSessionQuery = `SELECT user_id, lease_owner, lease_until FROM sessions WHERE project_id = ? AND thread_id = ?`
	latestTurnQuery     = `SELECT turn_id FROM turn_logs
WHERE project_id = ? AND thread_id = ? AND expires_at > ? ORDER BY turn_id DESC LIMIT 1`
	// turnEventsQuery reads the batches from the one that ends at the
	// reader's last event (for its final flag) on.
	turnEventsQuery = `SELECT last_seq, first_seq, data, final, expires_at FROM turn_logs
WHERE project_id = ? AND thread_id = ? AND turn_id = ? AND last_seq >= ? ORDER BY last_seq`
	// turnTailQuery reads a turn's last unexpired batch, for a reader
	// ahead of the log.
	turnTailQuery = `SELECT last_seq, final FROM turn_logs
WHERE project_id = ? AND thread_id = ? AND turn_id = ? AND expires_at > ? ORDER BY last_seq DESC LIMIT 1`
)

// turnAppend is one batch of a turn log waiting for its transaction.
type turnAppend struct {
	k           store.Key
	turn        string
	first, last int64
	data        []byte
	final       int
	expires     int64 // unix nanoseconds
}

// AppendTurnEvents implements store.TurnLogs with one INSERT, committed
// with the batches of other turns that arrive meanwhile (groupWriter: the
// transaction, not the statement, is the cost of a write); at most every
// turnLogPurgeEvery a transaction also purges the expired rows.
func (s *Store) AppendTurnEvents(ctx context.Context, k store.Key, ev store.TurnEvents, keep time.Duration) error {
	last, err := store.CheckTurnEvents(ev, keep)
	if err != nil {
		return fmt.Errorf("append turn events to session %s: %w", k.ThreadID, err)
	}
	a := turnAppend{k: k, turn: ev.Turn, first: ev.First, last: last, expires: s.now().Add(keep).UnixNano(),
		// Not compressed: a local write is not billed by the byte, and
		// the rows expire within hours.
		data: store.EncodeRawTurnEvents(ev.Events)}
	if ev.Final {
		a.final = 1
	}
	if err := s.turnLogWriter.add(ctx, a); err != nil {
		return fmt.Errorf("append turn events %d-%d of turn %s to session %s: %w", ev.First, last, ev.Turn, k.ThreadID, err)
	}
	return nil
}

// commitTurnAppends writes batch in one transaction; a batch whose
// session does not exist fails alone with store.ErrNotFound.
func (s *Store) commitTurnAppends(batch []turnAppend, errs []error) error {
	ctx, cancel := context.WithTimeout(context.Background(), groupCommitTimeout)
	defer cancel()
	return s.write(ctx, func(tx *sql.Tx) error {
		stmt := tx.StmtContext(ctx, s.ws.appendTurnEvents)
		for i, a := range batch {
			res, err := stmt.ExecContext(ctx, a.k.ProjectID, a.k.ThreadID, a.turn, a.last, a.first, a.data, a.final, a.expires, a.k.UserID)
			switch err := oneRow(res, err, store.ErrNotFound); {
			case errors.Is(err, store.ErrNotFound):
				errs[i] = err
			case err != nil:
				return err
			}
		}
		return s.purgeTurnLogs(ctx, tx, s.now())
	})
}

// purgeTurnLogs deletes the expired rows of turn_logs if they were not
// purged in the last turnLogPurgeEvery (by this Store).
func (s *Store) purgeTurnLogs(ctx context.Context, tx *sql.Tx, now time.Time) error {
	prev := s.turnLogsPurged.Load()
	if now.UnixNano()-prev < int64(turnLogPurgeEvery) || !s.turnLogsPurged.CompareAndSwap(prev, now.UnixNano()) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM turn_logs WHERE expires_at <= ?`, now.UnixNano()); err != nil {
		return fmt.Errorf("purge expired turn logs: %w", err)
	}
	return nil
}

// ReadTurnEvents implements store.TurnLogs in one read transaction: the
// session (owner and lease), the latest turn when turn is "", then the
// batches from the one ending at after on, as far as they are contiguous
// and within store.MaxTurnEventsRead.
func (s *Store) ReadTurnEvents(ctx context.Context, k store.Key, turn string, after int64) (*store.TurnEvents, error) {
	if after < 0 {
		return nil, fmt.Errorf("read turn events of session %s: negative event number %d", k.ThreadID, after)
	}
	now := s.now()
	var out *store.TurnEvents
	err := s.read(ctx, func(tx *sql.Tx) error {
		var user, owner, until string
		err := tx.StmtContext(ctx, s.rs.turnLogSession).QueryRowContext(ctx, k.ProjectID, k.ThreadID).Scan(&user, &owner, &until)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && user != k.UserID) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		live := owner != "" && until > now.UTC().Format(timeLayout)
		if turn == "" {
			err := tx.StmtContext(ctx, s.rs.latestTurn).QueryRowContext(ctx, k.ProjectID, k.ThreadID, now.UnixNano()).Scan(&turn)
			switch {
			case errors.Is(err, sql.ErrNoRows), err == nil && live && owner != turn:
				// No log, or the running turn logged nothing yet: the
				// lease holder is the latest turn.
				out = &store.TurnEvents{}
				if live {
					out = &store.TurnEvents{Turn: owner, First: after + 1, Live: true}
				}
				return nil
			case err != nil:
				return fmt.Errorf("latest turn: %w", err)
			}
		}
		if out, err = s.readBatches(ctx, tx, k, turn, after, now); err != nil {
			return err
		}
		if out.Turn == "" {
			// Ahead of the log, or no such turn: its last batch tells.
			var last int64
			var final bool
			err := tx.StmtContext(ctx, s.rs.turnTail).QueryRowContext(ctx, k.ProjectID, k.ThreadID, turn, now.UnixNano()).Scan(&last, &final)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				if live && owner == turn {
					// Running, nothing logged yet.
					out = &store.TurnEvents{Turn: turn, First: after + 1}
				}
			case err != nil:
				return fmt.Errorf("read the tail of turn %s: %w", turn, err)
			default:
				out = &store.TurnEvents{Turn: turn, First: after + 1, Final: final && last <= after}
			}
		}
		if out.Turn != "" {
			out.Live = live && owner == turn
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read turn events of session %s: %w", k.ThreadID, err)
	}
	return out, nil
}

// readBatches reads the events of turn after after (see ReadTurnEvents);
// Turn is "" when no unexpired batch of the turn ends at after or later.
func (s *Store) readBatches(ctx context.Context, tx *sql.Tx, k store.Key, turn string, after int64, now time.Time) (*store.TurnEvents, error) {
	rows, err := tx.StmtContext(ctx, s.rs.turnEvents).QueryContext(ctx, k.ProjectID, k.ThreadID, turn, after)
	if err != nil {
		return nil, fmt.Errorf("read turn %s: %w", turn, err)
	}
	defer func() { _ = rows.Close() }()
	out := &store.TurnEvents{}
	next, size := after+1, 0
	for rows.Next() {
		var (
			last, first, expires int64
			data                 []byte
			final                bool
		)
		if err := rows.Scan(&last, &first, &data, &final, &expires); err != nil {
			return nil, fmt.Errorf("read turn %s: %w", turn, err)
		}
		if expires <= now.UnixNano() {
			continue // expired: ignored, as if purged
		}
		out.Turn, out.First = turn, after+1
		if first > next {
			break // a gap: the contiguous events end here
		}
		if last < next {
			out.Final = final // the batch that ends at after
			continue
		}
		events, err := store.DecodeTurnEvents(data, last-first+1)
		if err != nil {
			return nil, fmt.Errorf("read turn %s, events %d-%d: %w", turn, first, last, err)
		}
		var whole bool
		out.Events, size, whole = store.TakeTurnEvents(out.Events, size, events, first, next)
		out.Final = whole && final
		if !whole || final {
			break
		}
		next = last + 1
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read turn %s: %w", turn, err)
	}
	return out, nil
}
