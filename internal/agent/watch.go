package agent

import (
	"context"
	"errors"
	"time"

	"agentchat/internal/store"
)

// The watch of a running turn: the abort flag polled (or notified) and the
// session's lease renewed until the turn ends.

// watch polls the abort flag (and reads it at once when the store notifies
// an abort, see store.AbortNotifier) and renews the lease until ctx ends;
// an abort, a lost lease or a deleted session (store.ErrNotFound) cancels
// the turn.
// notified receives the store's notifications of an abort of the session
// (nil: the store sends none).
func (t *Turn) watch(ctx context.Context, cancel context.CancelCauseFunc, notified <-chan struct{}) {
	o, log := t.r.o, t.r.log
	poll := time.NewTicker(o.AbortPoll)
	defer poll.Stop()
	renew := time.NewTicker(max(o.LeaseTTL/3, time.Millisecond))
	defer renew.Stop()
	gone := func() {
		log.InfoContext(ctx, "session deleted during the turn; stopping it", "session", t.req.Key.ThreadID)
		cancel(errSessionGone)
	}
	// checkAbort reads the flag; it reports whether the turn was stopped.
	checkAbort := func() bool {
		aborted, err := o.Store.AbortRequested(ctx, t.req.Key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			gone()
			return true
		case err != nil:
			if ctx.Err() == nil {
				log.WarnContext(ctx, "read abort flag", "session", t.req.Key.ThreadID, "err", err)
			}
		case aborted:
			cancel(errAborted)
			return true
		}
		return false
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-notified:
			poll.Reset(o.AbortPoll)
			if checkAbort() {
				return
			}
		case <-poll.C:
			if checkAbort() {
				return
			}
		case <-renew.C:
			err := o.Store.RenewLease(ctx, t.req.Key, t.owner, o.LeaseTTL)
			switch {
			case errors.Is(err, store.ErrNotFound):
				gone()
				return
			case errors.Is(err, store.ErrLeaseLost):
				log.WarnContext(ctx, "session lease lost", "session", t.req.Key.ThreadID)
				cancel(errLeaseLost)
				return
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "renew session lease", "session", t.req.Key.ThreadID, "err", err)
			}
		}
	}
}

// Causes of a turn context's end given by the watch.
var (
	errAborted   = errors.New("turn aborted by request")
	errLeaseLost = errors.New("turn lease lost")
	// errSessionGone: the session (or its project) was deleted during the
	// turn; the turn ends quietly and writes nothing more.
	errSessionGone = errors.New("session deleted during the turn")
)
