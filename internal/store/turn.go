package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// OpenTurn and FinishTurn are the one way a turn begins and ends on any
// Store. Like database/sql with its optional driver interfaces, they use
// the one-write calls a store has (TurnOpenCreator, TurnOpener,
// TurnFinisher, found through Capability) and compose the basic calls of
// Sessions, Messages and Leases otherwise; the result is the same.

// TurnOpening says which turn OpenTurn opens.
type TurnOpening struct {
	// Key is the session of the turn.
	Key Key
	// Owner is the turn's lease owner (non-empty, unique per turn).
	Owner string
	// TTL is how long the lease is taken for (renewed by RenewLease).
	TTL time.Duration
	// HistoryLimit is how many of the last messages OpenedTurn.History
	// returns (<= 0: all).
	HistoryLimit int
	// NewSession returns the session to create, with the lease, when Key
	// names none; nil: a missing session is ErrNotFound. It is called at
	// most once, right before (or inside) the write that creates the
	// session; its error refuses the turn: it is returned as it is and
	// nothing is written. The session must have Key's ids.
	NewSession func() (*Session, error)
	// Fresh says that the caller has just made Key's thread id, so that no
	// session can have it yet: the session (NewSession is required) is
	// created without being looked for, in one write
	// (CreateLeasedSession); ErrExists is then a failure, never a session
	// to join.
	Fresh bool
	// Seed are messages to store with the session when OpenTurn creates
	// it, in the same write, when the store can (SeededSessionCreator):
	// OpenedTurn.Seeded then holds them as stored. Otherwise nothing of
	// them is stored (the caller appends them).
	Seed []Message
	// RollBack, when set, is the id of a turn (interrupted by this one)
	// whose messages are removed (TurnRollbacks) once the lease is taken,
	// before History reads anything.
	RollBack string
}

// OpenedTurn is a turn opened by OpenTurn: its owner holds the session's
// lease.
type OpenedTurn struct {
	// Session is the session as it was when the lease was taken.
	Session *Session
	// Created is true when OpenTurn created the session (it has no
	// history).
	Created bool
	// Seeded are TurnOpening.Seed as stored with the created session (nil
	// when they were not stored).
	Seeded []Message

	st      Store
	key     Key
	limit   int
	history []Message
	// loaded: history was read with the lease, in the same write.
	loaded bool
}

// HistoryLoaded reports whether History answers without a store call: the
// session was created, or the store read its history with the lease.
func (o *OpenedTurn) HistoryLoaded() bool { return o.Created || o.loaded }

// History returns the session's last TurnOpening.HistoryLimit committed
// messages as they were when the lease was taken: none for a created
// session, those read with the lease when the store did (TurnOpener), else
// ListMessages's (the lease keeps other turns from writing meanwhile).
func (o *OpenedTurn) History(ctx context.Context) ([]Message, error) {
	if o.HistoryLoaded() {
		return o.history, nil
	}
	return o.st.ListMessages(ctx, o.key, o.limit)
}

// OpenTurn takes the lease of the session op.Key for op.Owner until
// now+op.TTL and returns the session, creating it (op.NewSession) when it
// is missing. Errors: a *LeaseHeldError when another turn holds the
// lease; ErrNotFound when the session is missing and op.NewSession is nil,
// or when the thread id is another user's; a *LimitError as CreateSession;
// op.NewSession's error as it is.
//
// Costs: one write on a TurnOpenCreator (existing or missing session); on
// a TurnOpener, its one call when nothing is to be created, else the
// session read beside it, then the creation when both found nothing; on a
// store with the basic calls only, the session read and the lease in
// parallel, then the history, or the creation when both found nothing
// (two sequential round trips at most); with op.Fresh, one write on every
// store.
func OpenTurn(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	o, err := openTurn(ctx, st, op)
	if err != nil || op.RollBack == "" || o.Created {
		return o, err
	}
	if err := o.rollBack(ctx, op.RollBack); err != nil {
		releaseQuietly(ctx, st, op.Key, op.Owner)
		return nil, fmt.Errorf("roll back turn %s of session %s: %w", op.RollBack, op.Key.ThreadID, err)
	}
	return o, nil
}

// rollBack removes the messages of turn (TurnRollbacks); a history read
// with the lease is read again.
func (o *OpenedTurn) rollBack(ctx context.Context, turn string) error {
	rb, ok := Capability[TurnRollbacks](o.st)
	if !ok {
		return errors.New("the store cannot remove a turn's messages")
	}
	n, err := rb.RollBackTurn(ctx, o.key, turn)
	if err != nil {
		return err
	}
	if n > 0 {
		o.Session.MessageCount = max(0, o.Session.MessageCount-int64(n))
		o.loaded, o.history = false, nil
	}
	return nil
}

// openTurn is OpenTurn without the roll-back.
func openTurn(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	if op.Fresh {
		return createTurn(ctx, st, op)
	}
	if op.NewSession != nil {
		if oc, ok := Capability[TurnOpenCreator](st); ok {
			sess, hist, created, err := oc.OpenOrCreateTurn(ctx, op.Key, op.Owner, op.TTL, op.HistoryLimit, op.NewSession)
			switch {
			case errors.Is(err, ErrExists):
				// Created meanwhile, or another user's thread id.
				return rejoinTurn(ctx, st, op)
			case err != nil:
				return nil, err
			}
			return op.opened(st, sess, hist, created, true), nil
		}
	}
	if g, ok := Capability[TurnOpenGuesser](st); ok && op.NewSession != nil {
		sess, hist, err := g.OpenTurnOrGuess(ctx, op.Key, op.Owner, op.TTL, op.HistoryLimit)
		switch {
		case errors.Is(err, ErrNotFound):
			// Missing, or created moments ago: a creation that finds the
			// id taken rejoins the session.
			return createTurn(ctx, st, op)
		case err != nil:
			return nil, err
		}
		return op.opened(st, sess, hist, false, true), nil
	}
	if o, ok := Capability[TurnOpener](st); ok && op.NewSession == nil {
		sess, hist, err := o.OpenTurn(ctx, op.Key, op.Owner, op.TTL, op.HistoryLimit)
		if err != nil {
			return nil, err
		}
		return op.opened(st, sess, hist, false, true), nil
	}
	// A session that may have to be created: its read beside the lease
	// (OpenTurn's when the store has it) tells a missing one at once.
	return composeOpen(ctx, st, op)
}

// opened is the OpenedTurn of op.
func (op TurnOpening) opened(st Store, sess *Session, hist []Message, created, loaded bool) *OpenedTurn {
	return &OpenedTurn{Session: sess, Created: created, st: st, key: op.Key, limit: op.HistoryLimit, history: hist, loaded: loaded}
}

// composeOpen is OpenTurn with the basic calls: the session read and the
// lease at once; at the first sign of a missing session (either call
// finding none), its creation, beside the other call still under way.
// The lease is the store's OpenTurn when it has one (TurnOpener): an
// existing session then comes with its history, in the same round trip.
func composeOpen(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	k := op.Key
	lease := func(ctx context.Context) (*OpenedTurn, error) {
		return nil, st.AcquireLease(ctx, k, op.Owner, op.TTL)
	}
	if o, ok := Capability[TurnOpener](st); ok {
		lease = func(ctx context.Context) (*OpenedTurn, error) {
			sess, hist, err := o.OpenTurn(ctx, k, op.Owner, op.TTL, op.HistoryLimit)
			if err != nil {
				return nil, err
			}
			return op.opened(st, sess, hist, false, true), nil
		}
	}
	type answer struct {
		lease bool
		// opened is the lease's OpenedTurn (TurnOpener), nil otherwise.
		opened *OpenedTurn
		sess   *Session
		err    error
	}
	answers := make(chan answer, 2)
	go func() {
		s, err := st.GetSession(ctx, k)
		answers <- answer{sess: s, err: err}
	}()
	go func() {
		o, err := lease(ctx)
		answers <- answer{lease: true, opened: o, err: err}
	}()
	var (
		sess       *Session
		opened     *OpenedTurn
		gerr, lerr error
	)
	take := func(a answer) error {
		if a.lease {
			opened, lerr = a.opened, a.err
		} else {
			sess, gerr = a.sess, a.err
		}
		return a.err
	}
	// held returns the opened turn of a lease taken by op's owner.
	held := func(s *Session) (*OpenedTurn, error) {
		switch {
		case opened != nil:
			return opened, nil
		case s != nil:
			return op.opened(st, s, nil, false, false), nil
		}
		return readHeld(ctx, st, op)
	}
	if err := take(<-answers); op.NewSession != nil && errors.Is(err, ErrNotFound) {
		o, cerr := create(ctx, st, op)
		// No call of the opening outlives it: a late AcquireLease could
		// otherwise land after the turn's release.
		take(<-answers)
		switch {
		case cerr == nil:
			// The other call failed, or was a lease taken after the
			// creation: this owner's own.
			return o, nil
		case errors.Is(cerr, ErrExists) && lerr == nil:
			// The lease found the session the read missed.
			return held(nil)
		case errors.Is(cerr, ErrExists):
			// Created meanwhile, or another user's thread id.
			return rejoinTurn(ctx, st, op)
		case lerr == nil:
			releaseQuietly(ctx, st, k, op.Owner)
		}
		return nil, cerr
	}
	take(<-answers)
	leased := lerr == nil
	switch {
	case gerr != nil && !errors.Is(gerr, ErrNotFound):
		if leased {
			releaseQuietly(ctx, st, k, op.Owner)
		}
		return nil, fmt.Errorf("load session %s: %w", k.ThreadID, gerr)
	case lerr != nil && !errors.Is(lerr, ErrNotFound):
		// The session exists (the lease found it) and is not ours.
		return nil, fmt.Errorf("acquire lease of session %s: %w", k.ThreadID, lerr)
	case gerr == nil && leased:
		return held(sess)
	case gerr == nil:
		// The session appeared between the two calls: take the lease.
		o, err := lease(ctx)
		if err != nil {
			return nil, fmt.Errorf("acquire lease of session %s: %w", k.ThreadID, err)
		}
		opened = o
		return held(sess)
	case leased:
		// The lease found the session the read missed.
		return held(nil)
	}
	// Both found none, and there is nothing to create.
	return nil, fmt.Errorf("load session %s: %w", k.ThreadID, gerr)
}

// readHeld reads the session whose lease op's owner took (the read beside
// the lease missed it: it appeared in between).
func readHeld(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	s, err := st.GetSession(ctx, op.Key)
	if err != nil {
		releaseQuietly(ctx, st, op.Key, op.Owner)
		return nil, fmt.Errorf("load session %s: %w", op.Key.ThreadID, err)
	}
	return op.opened(st, s, nil, false, false), nil
}

// createTurn creates op's session with its lease in one write; a thread
// id already taken (not op.Fresh) is opened as an existing session.
func createTurn(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	o, err := create(ctx, st, op)
	if errors.Is(err, ErrExists) && !op.Fresh {
		// Created meanwhile, or another user's thread id.
		return rejoinTurn(ctx, st, op)
	}
	return o, err
}

// create creates op's session with its lease in one write (ErrExists when
// the thread id is taken).
func create(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	if op.NewSession == nil {
		return nil, fmt.Errorf("create session %s: no session to create", op.Key.ThreadID)
	}
	s, err := op.NewSession()
	if err != nil {
		return nil, err
	}
	if s.Key() != op.Key {
		return nil, fmt.Errorf("create session %s: the new session %s is not the turn's", op.Key.ThreadID, s.ThreadID)
	}
	if sc, ok := Capability[SeededSessionCreator](st); ok && len(op.Seed) > 0 {
		seeded, err := sc.CreateSeededSession(ctx, s, op.Owner, op.TTL, op.Seed)
		if err != nil {
			return nil, fmt.Errorf("create session %s: %w", s.ThreadID, err)
		}
		o := op.opened(st, s, nil, true, false)
		o.Seeded = seeded
		return o, nil
	}
	if err := st.CreateLeasedSession(ctx, s, op.Owner, op.TTL); err != nil {
		return nil, fmt.Errorf("create session %s: %w", s.ThreadID, err)
	}
	return op.opened(st, s, nil, true, false), nil
}

// rejoinTurn opens the session that a creation found already there: one
// created meanwhile by the same user is opened, another user's is
// ErrNotFound.
func rejoinTurn(ctx context.Context, st Store, op TurnOpening) (*OpenedTurn, error) {
	op.NewSession = nil
	return OpenTurn(ctx, st, op)
}

// releaseQuietly frees a lease taken by an opening that then failed; the
// opening's error is what the caller gets.
func releaseQuietly(ctx context.Context, st Store, k Key, owner string) {
	_ = st.ReleaseLease(context.WithoutCancel(ctx), k, owner)
}

// FinishTurn ends owner's turn on k: it appends msgs (none is allowed),
// adds d to the session's counters, with msgs counted (Messages and
// LastMessageAt, which d must leave out), and releases the lease. A
// TurnFinisher does it in one write; otherwise, or when that write fails,
// the calls are made one by one. Whatever fails, what can still be written
// is: after a failed append (or one-write end), the statistics without
// msgs (and with at least one error: d.Errors is then at least 1) are
// still added and the lease is still released.
//
// It returns the appended messages (nil when they were not stored) and
// every failure joined; errors.Is(err, ErrNotFound) means the session was
// deleted (nothing more is written then).
func FinishTurn(ctx context.Context, st Store, k Key, owner string, msgs []Message, d TurnStats) ([]Message, error) {
	var errs []error
	if fin, ok := Capability[TurnFinisher](st); ok {
		out, err := fin.FinishTurn(ctx, k, owner, msgs, withMessages(d, msgs))
		if err == nil || errors.Is(err, ErrNotFound) || out != nil {
			// With out, the messages are stored and the store's own
			// write of the statistics or release failed.
			return out, err
		}
		errs = append(errs, err)
	} else if len(msgs) > 0 {
		out, err := st.AppendMessages(ctx, k, msgs)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("finish turn on session %s: %w", k.ThreadID, err)
		case err == nil:
			d = withMessages(d, out)
			msgs = out
		default:
			errs = append(errs, fmt.Errorf("finish turn on session %s: %w", k.ThreadID, err))
		}
	}
	if len(errs) > 0 {
		if len(msgs) > 0 {
			// A turn whose messages were lost ended with an error.
			d.Errors = max(d.Errors, 1)
		}
		msgs = nil
	}
	if err := st.AddTurnStats(ctx, k, d); err != nil {
		errs = append(errs, fmt.Errorf("write turn statistics of session %s: %w", k.ThreadID, err))
	}
	if err := st.ReleaseLease(ctx, k, owner); err != nil {
		errs = append(errs, fmt.Errorf("release lease of session %s: %w", k.ThreadID, err))
	}
	return msgs, errors.Join(errs...)
}

// FinishTitledTurn is FinishTurn that also sets title (when not empty) as
// the session's generated title, unless the user set one: in the same
// write on a TitledTurnFinisher, else (or when that write fails) with
// Sessions.SetGeneratedTitle right before FinishTurn. A title that could
// not be stored fails nothing else: its error is joined to FinishTurn's.
func FinishTitledTurn(ctx context.Context, st Store, k Key, owner string, msgs []Message, d TurnStats, title string) ([]Message, error) {
	if title == "" {
		return FinishTurn(ctx, st, k, owner, msgs, d)
	}
	if tf, ok := Capability[TitledTurnFinisher](st); ok {
		out, err := tf.FinishTitledTurn(ctx, k, owner, msgs, withMessages(d, msgs), title)
		if err == nil || errors.Is(err, ErrNotFound) || out != nil {
			// With out, the messages are stored (as FinishTurn's).
			return out, err
		}
	}
	var titleErr error
	if _, err := st.SetGeneratedTitle(ctx, k, title); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("finish turn on session %s: %w", k.ThreadID, err)
		}
		titleErr = fmt.Errorf("set generated title of session %s: %w", k.ThreadID, err)
	}
	out, err := FinishTurn(ctx, st, k, owner, msgs, d)
	return out, errors.Join(err, titleErr)
}

// withMessages is d with msgs counted.
func withMessages(d TurnStats, msgs []Message) TurnStats {
	d.Messages += int64(len(msgs))
	for _, m := range msgs {
		if m.CreatedAt.After(d.LastMessageAt) {
			d.LastMessageAt = m.CreatedAt
		}
	}
	return d
}
