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
	if owner == "" {
		return nil, nil, fmt.Errorf("open turn on session %s: empty owner", k.ThreadID)
	}
	sess, hist, _, err := s.openTurn(ctx, k, owner, ttl, historyLimit, nil, nil)
	return sess, hist, err
}

// OpenOrCreateTurn implements store.TurnOpenCreator: OpenTurn's write,
// in which a missing session is created instead of reported. newSession
// is called before the write, never inside it, so that what it waits for
// (the turn's LLM configuration, which may ask the GNS3 server) never
// holds the database's write lock; its error is returned as it is, with
// nothing written.
//
// A session this Store holds nothing of (no history cached: not made,
// opened or appended to through it lately) is most likely new: its
// creation is tried first, which costs a new session no refused lease
// UPDATE and no read of what refused it, and a session that exists one
// refused INSERT before the lease's UPDATE. Any other session is opened
// by the lease first; found missing after all, it is made and the write
// tried again, creation first.
func (s *Store) OpenOrCreateTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int,
	newSession func() (*store.Session, error)) (*store.Session, []store.Message, bool, error) {
	if owner == "" {
		return nil, nil, false, fmt.Errorf("open turn on session %s: empty owner", k.ThreadID)
	}
	if s.history.has(threadRef{project: k.ProjectID, thread: k.ThreadID}) {
		sess, hist, _, err := s.openTurn(ctx, k, owner, ttl, historyLimit, nil, errMakeFirst)
		if !errors.Is(err, errMakeFirst) {
			return sess, hist, false, err
		}
	}
	ns, err := newSession()
	if err != nil {
		return nil, nil, false, err
	}
	if ns.Key() != k {
		return nil, nil, false, fmt.Errorf("open turn on session %s: the new session is %s", k.ThreadID, ns.ThreadID)
	}
	return s.openTurn(ctx, k, owner, ttl, historyLimit, ns, nil)
}

// errMakeFirst is how OpenOrCreateTurn's lease-first write reports a
// missing session: it is made before the write is tried again.
var errMakeFirst = errors.New("the session is missing: make it first")

// openTurn is OpenTurn's write. With ns, ns is inserted first (with the
// lease), and the lease is taken as OpenTurn's when its thread id is taken
// (ErrExists when by another user's session). Without, a missing session
// is reported as missing (store.ErrNotFound, or as it is when not nil).
// owner is not empty (OpenTurn and OpenOrCreateTurn check it, the latter
// before newSession runs).
func (s *Store) openTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int,
	ns *store.Session, missing error) (*store.Session, []store.Message, bool, error) {
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
		if ns != nil {
			if created, err = s.createInTx(ctx, tx, ns, owner, until); !errors.Is(err, store.ErrExists) {
				return err
			}
		}
		sess, err = scanSession(tx.StmtContext(ctx, s.ws.openLease).QueryRowContext(ctx,
			leaseArgs(k, owner, t, until)...), &seq, &lastID)
		if errors.Is(err, sql.ErrNoRows) {
			err = s.leaseRefusal(ctx, tx, k)
		}
		if errors.Is(err, store.ErrNotFound) {
			switch {
			case ns != nil:
				return store.ErrExists // the thread id is another user's
			case missing != nil:
				return missing
			}
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
	if missing != nil && errors.Is(err, missing) {
		return nil, nil, false, missing
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

// createInTx inserts ns with owner's lease until until, in tx.
func (s *Store) createInTx(ctx context.Context, tx *sql.Tx, ns *store.Session, owner, until string) (*sessionInsert, error) {
	in, err := s.encodeSession(ns)
	if err != nil {
		return nil, err
	}
	if err := s.insertSessionTx(ctx, tx, in, owner, until); err != nil {
		return nil, err
	}
	return in, nil
}

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
