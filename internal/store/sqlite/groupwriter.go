package sqlite

import (
	"context"
	"errors"
	"time"
)

// Some writes are made once per turn by every turn (the usage ledger's
// add, the turn log's batches): on a busy server most of the cost of such
// a write is its own write transaction (BEGIN IMMEDIATE, commit), not its
// statement. A group writer commits them in groups instead (group
// commit): the first write waiting starts a transaction at once, and every
// write that arrives while one commits goes into the next, so a lone write
// waits for nobody and a burst shares its commits. Each write still
// returns only once its transaction is committed.
//
// Under a steady load the writes rarely overlap a commit (make bench-e2e's
// v1-stream at c=50: an add every 300 us, a commit of 60 us), so nearly
// every add paid a transaction of its own: the ledger was 18 % of the
// server's CPU. When writes come often, the first write of a transaction
// waits up to groupLinger for others (lingerPolicy); a lone writer never
// waits, and one that sends its requests one after the other rarely.

// Bounds of a group writer.
const (
	// groupQueue is how many writes may wait for the next transaction.
	groupQueue = 256
	// groupMaxBatch bounds the writes of one transaction.
	groupMaxBatch = 128
	// groupCommitTimeout bounds one transaction.
	groupCommitTimeout = 10 * time.Second
	// groupLinger is the longest the first write of a transaction waits
	// for others under load (see lingerPolicy).
	groupLinger = time.Millisecond
)

// errWriterClosed is the error of a write to a closed store.
var errWriterClosed = errors.New("store closed")

// groupCommit runs one transaction for vs: it returns the error that
// fails them all (nil: committed), and may set errs[i] for a write that
// failed alone (the others are committed).
type groupCommit[T any] func(vs []T, errs []error) error

// pending is one write waiting for its transaction, queued at at.
type pending[T any] struct {
	v    T
	at   time.Time
	done chan error
}

// lingerPolicy tells how long the first write of a transaction waits for
// others. It waits max when writes come at least twice per max (gap, a
// moving average of the time between writes, is at most max/2): the wait
// most likely gathers others. A wait that gathered nobody (a client that
// sends requests one after the other, quickly; the end of a burst) makes
// the next lingerBackoff transactions wait for nobody, unless writes
// overlap a commit meanwhile.
type lingerPolicy struct {
	max  time.Duration
	gap  time.Duration
	last time.Time
	skip int
}

// lingerBackoff is how many transactions do not wait after a wait that
// gathered nobody.
const lingerBackoff = 8

// arrived records a write queued at at (in order). A long silence counts
// as 4*max, so that a few quick writes after it make a load again.
func (p *lingerPolicy) arrived(at time.Time) {
	g := 4 * p.max
	if p.last.IsZero() {
		p.gap = g
	} else {
		g = min(max(at.Sub(p.last), 0), g)
	}
	p.gap += (g - p.gap) / 8
	p.last = at
}

// committed records a transaction of n writes, whose first write waited
// for others or not.
func (p *lingerPolicy) committed(n int, waited bool) {
	switch {
	case waited && n == 1:
		p.skip = lingerBackoff
	case !waited && n > 1:
		p.skip = 0 // writes overlapped a commit: a load
	case p.skip > 0:
		p.skip--
	}
}

// wait is how long the next transaction's first write waits for others.
func (p *lingerPolicy) wait() time.Duration {
	if p.max <= 0 || p.last.IsZero() || p.skip > 0 || 2*p.gap > p.max {
		return 0
	}
	return p.max
}

// groupWriter runs its transactions on its own goroutine, from the
// store's Open to its Close.
type groupWriter[T any] struct {
	queue   chan pending[T]
	quit    chan struct{}
	stopped chan struct{}
	linger  lingerPolicy
}

// startGroupWriter starts a writer whose transactions commit runs, whose
// first write waits up to linger for others under load (0: never).
func startGroupWriter[T any](commit groupCommit[T], linger time.Duration) *groupWriter[T] {
	w := &groupWriter[T]{queue: make(chan pending[T], groupQueue), quit: make(chan struct{}), stopped: make(chan struct{}),
		linger: lingerPolicy{max: linger}}
	go w.run(commit)
	return w
}

// add queues v and waits until its transaction committed, or ctx ends (v
// may then still be committed).
func (w *groupWriter[T]) add(ctx context.Context, v T) error {
	select {
	case <-w.quit:
		return errWriterClosed
	default:
	}
	p := pending[T]{v: v, at: time.Now(), done: make(chan error, 1)}
	select {
	case w.queue <- p:
	case <-w.quit:
		return errWriterClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.done:
		return err
	case <-w.stopped:
		// Closed meanwhile: v was in the last transaction, or it was
		// queued after the writer stopped and nobody will take it.
		select {
		case err := <-p.done:
			return err
		default:
			return errWriterClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run commits the waiting writes in groups until close.
func (w *groupWriter[T]) run(commit groupCommit[T]) {
	defer close(w.stopped)
	batch := make([]pending[T], 0, groupMaxBatch)
	vs := make([]T, 0, groupMaxBatch)
	errs := make([]error, groupMaxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case p := <-w.queue:
			batch = append(batch[:0], p)
		case <-w.quit:
			w.refuseWaiting()
			return
		}
		wait := w.linger.wait()
		w.linger.arrived(batch[0].at)
		batch = w.gather(batch, nil)
		waited := false
		if d := time.Until(batch[0].at.Add(wait)); wait > 0 && d > 0 && len(batch) < groupMaxBatch {
			waited = true
			timer.Reset(d)
			batch = w.gather(batch, timer.C)
			timer.Stop()
		}
		vs = vs[:0]
		for _, p := range batch {
			vs = append(vs, p.v)
		}
		clear(errs)
		err := commit(vs, errs[:len(batch)])
		w.linger.committed(len(batch), waited)
		for i, p := range batch {
			if err != nil {
				p.done <- err
			} else {
				p.done <- errs[i]
			}
		}
	}
}

// gather adds the queued writes to batch, up to groupMaxBatch: those
// waiting when until is nil, else those that come before until fires (or
// the writer closes).
func (w *groupWriter[T]) gather(batch []pending[T], until <-chan time.Time) []pending[T] {
	for len(batch) < groupMaxBatch {
		if until == nil {
			select {
			case p := <-w.queue:
				w.linger.arrived(p.at)
				batch = append(batch, p)
				continue
			default:
				return batch
			}
		}
		select {
		case p := <-w.queue:
			w.linger.arrived(p.at)
			batch = append(batch, p)
		case <-until:
			return batch
		case <-w.quit:
			return batch
		}
	}
	return batch
}

// refuseWaiting answers the writes still queued at close.
func (w *groupWriter[T]) refuseWaiting() {
	for {
		select {
		case p := <-w.queue:
			p.done <- errWriterClosed
		default:
			return
		}
	}
}

// close stops the writer once its current transaction is done.
func (w *groupWriter[T]) close() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	<-w.stopped
}
