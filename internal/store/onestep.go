package store

import (
	"context"
	"time"
)

// A turn on a session makes a fixed series of store calls: take the lease,
// read the session and its history, append the messages, add the
// statistics and release the lease. A store whose writes are transactions
// on one database (SQLite) can make several of them one transaction, which
// costs less than each alone; the optional interfaces below say so, and
// OpenTurn and FinishTurn (turn.go) use them when the store has them (see
// Capability). A store without them is used call by call, as the
// interfaces above define.

// TurnOpener is a Store that opens a turn on an existing session in one
// step.
type TurnOpener interface {
	// OpenTurn takes the session's lease for owner until now+ttl, exactly
	// as Leases.AcquireLease (same errors: ErrNotFound, a *LeaseHeldError),
	// and returns the session and its last historyLimit committed messages
	// (as Messages.ListMessages; historyLimit <= 0 means all), read at the
	// moment the lease was taken, so that no other turn wrote in between.
	OpenTurn(ctx context.Context, k Key, owner string, ttl time.Duration, historyLimit int) (*Session, []Message, error)
}

// TurnOpenGuesser is a TurnOpener that can open a turn that may create
// its session without reading the session beside the lease: when the
// lease finds no session, OpenTurnOrGuess may answer ErrNotFound from what
// it read beside it, reads that can lag (an eventually consistent query),
// so that a session created moments ago can be taken for missing. It
// serves only openings that create a missing session (OpenTurn then
// creates it, and a creation that finds the id taken, ErrExists, rejoins
// the session through OpenTurn); its other answers are OpenTurn's.
type TurnOpenGuesser interface {
	TurnOpener
	// OpenTurnOrGuess is OpenTurn whose ErrNotFound may be a guess.
	OpenTurnOrGuess(ctx context.Context, k Key, owner string, ttl time.Duration, historyLimit int) (*Session, []Message, error)
}

// TurnOpenCreator is a TurnOpener that also creates a missing session in
// the same step.
type TurnOpenCreator interface {
	// OpenOrCreateTurn is OpenTurn, except that a session that does not
	// exist is created from what newSession returns, with owner's lease
	// until now+ttl (as CreateLeasedSession), in the same atomic write;
	// created reports it (the history is then empty). newSession is
	// called at most once, before the write or inside it, and its error (a
	// refused turn) is returned as it is with nothing written; a store may
	// call it also for a session that exists (when it tries the creation
	// first). ErrExists when the thread id is taken (another user's); a
	// *LimitError as CreateSession.
	OpenOrCreateTurn(ctx context.Context, k Key, owner string, ttl time.Duration, historyLimit int,
		newSession func() (*Session, error)) (sess *Session, hist []Message, created bool, err error)
}

// TurnFinisher is a Store that ends a turn in one step.
type TurnFinisher interface {
	// FinishTurn appends msgs (as Messages.AppendMessages, none is
	// allowed), adds d to the session's counters (as
	// Sessions.AddTurnStats) and releases owner's lease (as
	// Leases.ReleaseLease) atomically, and returns the appended messages.
	// ErrNotFound, with nothing written, when the session does not exist.
	// A store that cannot write all of it at once may, when the messages
	// are stored but its write of the statistics and release failed,
	// return them with that error; on any other error it has written none
	// of the statistics nor released the lease.
	FinishTurn(ctx context.Context, k Key, owner string, msgs []Message, d TurnStats) ([]Message, error)
}

// SeededSessionCreator is a Store that creates a session with its lease
// and its first messages in one step (a new session's turn stores its user
// message with the session).
type SeededSessionCreator interface {
	// CreateSeededSession is Sessions.CreateLeasedSession that also
	// appends msgs (as Messages.AppendMessages) in the same atomic write;
	// it returns the appended messages.
	CreateSeededSession(ctx context.Context, sess *Session, owner string, ttl time.Duration, msgs []Message) ([]Message, error)
}

// TitledTurnFinisher is a TurnFinisher that also sets the session's
// generated title in the same step (a new session's turn, whose title is
// made once its answer is final).
type TitledTurnFinisher interface {
	// FinishTitledTurn is FinishTurn that also sets title as the session's
	// generated title, unless the user set one (as
	// Sessions.SetGeneratedTitle), in the same atomic write.
	FinishTitledTurn(ctx context.Context, k Key, owner string, msgs []Message, d TurnStats, title string) ([]Message, error)
}

// Wrapper is a Store that adds behaviour around another one (such as
// WithAbortNotifications); Unwrap returns that one.
type Wrapper interface {
	Unwrap() Store
}

// Capability returns st as a T (one of the optional interfaces, such as
// TurnOpener), looking through the Stores it wraps (Wrapper) when st itself
// is not one: a wrapper changes the methods it defines, never these.
func Capability[T any](st Store) (T, bool) {
	for st != nil {
		if c, ok := st.(T); ok {
			return c, true
		}
		w, ok := st.(Wrapper)
		if !ok {
			break
		}
		st = w.Unwrap()
	}
	var none T
	return none, false
}
