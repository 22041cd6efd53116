package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// A turn costs a write transaction for each of its store calls, and a
// commit is most of what a SQLite write costs (make bench-e2e's profile of
// the project stream: store writes were a quarter of the server's CPU, five
// of them per turn). OpenTurn and FinishTurn make the first and the last
// calls of a turn one transaction each.

var (
	_ store.TurnOpener   = (*Store)(nil)
	_ store.TurnFinisher = (*Store)(nil)
)

// OpenTurn implements store.TurnOpener: the lease, the session and its
// history in one write transaction (the history from historyCache when
// it is current).
func (s *Store) OpenTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int) (*store.Session, []store.Message, error) {
	sess, hist, _, err := s.openTurn(ctx, k, owner, ttl, historyLimit, nil)
	return sess, hist, err
}

// OpenOrCreateTurn implements store.TurnOpenCreator: OpenTurn's write,
// in which a missing session is created (newSession is called inside it)
// instead of reported. The creation comes first, before the lease, for a
// session whose history the Store does not hold (see openTurn).
func (s *Store) OpenOrCreateTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int,
	newSession func() (*store.Session, error)) (*store.Session, []store.Message, bool, error) {
	return s.openTurn(ctx, k, owner, ttl, historyLimit, newSession)
}

// openTurn is OpenTurn, and OpenOrCreateTurn when newSession is not nil.
func (s *Store) openTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int,
	newSession func() (*store.Session, error)) (*store.Session, []store.Message, bool, error) {
	if owner == "" {
		return nil, nil, false, fmt.Errorf("open turn on session %s: empty owner", k.ThreadID)
	}
	// A session this Store holds nothing of (no history cached: not made,
	// opened or appended to through it lately) is most likely new when the
	// turn may create it (a client-made id's first turn): its creation is
	// tried first, which costs a new session no refused lease UPDATE and
	// no read of what refused it, and a session that exists one refused
	// INSERT before the lease's UPDATE. newSession is then called before
	// the write, so that what it waits for (the turn's LLM configuration,
	// which may ask the GNS3 server) never holds the database's write lock;
	// its error is returned as it is, nothing written.
	insertFirst := newSession != nil && !s.history.has(threadRef{project: k.ProjectID, thread: k.ThreadID})
	if insertFirst {
		ns, err := newSession()
		if err != nil {
			return nil, nil, false, err
		}
		newSession = func() (*store.Session, error) { return ns, nil }
	}
	t, until, err := s.leaseUntil(ttl)
	if err != nil {
		return nil, nil, false, fmt.Errorf("open turn on session %s: %w", k.ThreadID, err)
	}
	var (
		sess    *store.Session
		hist    []store.Message
		created *sessionInsert
	)
	err = s.write(ctx, func(tx *sql.Tx) error {
		var (
			seq    int64
			lastID sql.NullString
			err    error
		)
		if insertFirst {
			if created, err = s.createInTx(ctx, tx, k, owner, until, newSession); !errors.Is(err, store.ErrExists) {
				return err
			}
		}
		sess, err = scanSession(tx.StmtContext(ctx, s.ws.openLease).QueryRowContext(ctx,
			leaseArgs(k, owner, t, until)...), &seq, &lastID)
		if errors.Is(err, sql.ErrNoRows) {
			err = s.leaseRefusal(ctx, tx, k)
		}
		if insertFirst && errors.Is(err, store.ErrNotFound) {
			return store.ErrExists // the thread id is another user's
		}
		if newSession != nil && errors.Is(err, store.ErrNotFound) {
			created, err = s.createInTx(ctx, tx, k, owner, until, newSession)
			return err
		}
		if err != nil {
			return err
		}
		hist, err = s.historyAt(ctx, tx, k, seq, lastID, historyLimit)
		if err != nil {
			return fmt.Errorf("read the history: %w", err)
		}
		return nil
	})
	var refused *refusedError
	if errors.As(err, &refused) {
		return nil, nil, false, refused.err
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("open turn on session %s: %w", k.ThreadID, err)
	}
	if created != nil {
		s.stored(created)
		return created.sess, nil, true, nil
	}
	return sess, hist, false, nil
}

// createInTx inserts the session newSession returns for k, with owner's
// lease until until, in tx; newSession's error comes back as a
// *refusedError.
func (s *Store) createInTx(ctx context.Context, tx *sql.Tx, k store.Key, owner, until string,
	newSession func() (*store.Session, error)) (*sessionInsert, error) {
	ns, err := newSession()
	if err != nil {
		return nil, &refusedError{err: err}
	}
	if ns.Key() != k {
		return nil, fmt.Errorf("the new session %s is not the session %s of the turn", ns.ThreadID, k.ThreadID)
	}
	in, err := s.encodeSession(ns)
	if err != nil {
		return nil, err
	}
	if err := s.insertSessionTx(ctx, tx, in, owner, until); err != nil {
		return nil, err
	}
	return in, nil
}

// refusedError carries the error of OpenOrCreateTurn's newSession out of
// the write, unwrapped.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

// FinishTurn implements store.TurnFinisher: the messages, the statistics
// and the release of the lease in one write transaction.
func (s *Store) FinishTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats) ([]store.Message, error) {
	return s.finishTurn(ctx, k, owner, msgs, d, "")
}

var _ store.TitledTurnFinisher = (*Store)(nil)

// FinishTitledTurn implements store.TitledTurnFinisher: FinishTurn's write
// also sets the generated title (unless the user set one).
func (s *Store) FinishTitledTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats, title string) ([]store.Message, error) {
	return s.finishTurn(ctx, k, owner, msgs, d, title)
}

// finishTurn is FinishTurn, which also sets title when it is not empty.
func (s *Store) finishTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats, title string) ([]store.Message, error) {
	out, rows, err := s.encodeMessages(k, msgs)
	if err != nil {
		return nil, fmt.Errorf("finish turn on session %s: %w", k.ThreadID, err)
	}
	last, err := encTime(d.LastMessageAt)
	if err != nil {
		return nil, fmt.Errorf("finish turn on session %s: last_message_at: %w", k.ThreadID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := s.appendTx(ctx, tx, k, out, rows); err != nil {
			return err
		}
		if err := s.addTurnStatsTx(ctx, tx, k, d, last); err != nil {
			return err
		}
		if title != "" {
			// No row changed: the user set the title (the session exists,
			// addTurnStatsTx found it).
			if _, err := tx.StmtContext(ctx, s.ws.setGeneratedTitle).ExecContext(ctx, append([]any{title}, keyArgs(k)...)...); err != nil {
				return fmt.Errorf("set generated title: %w", err)
			}
		}
		_, err := tx.StmtContext(ctx, s.ws.releaseLease).ExecContext(ctx, k.ProjectID, k.ThreadID, k.UserID, owner)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("finish turn on session %s: %w", k.ThreadID, err)
	}
	s.history.appended(threadRef{project: k.ProjectID, thread: k.ThreadID}, out)
	return out, nil
}
