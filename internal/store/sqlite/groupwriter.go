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

// Bounds of a group writer.
const (
	// groupQueue is how many writes may wait for the next transaction.
	groupQueue = 256
	// groupMaxBatch bounds the writes of one transaction.
	groupMaxBatch = 128
	// groupCommitTimeout bounds one transaction.
	groupCommitTimeout = 10 * time.Second
)

// errWriterClosed is the error of a write to a closed store.
var errWriterClosed = errors.New("store closed")

// groupCommit runs one transaction for vs: it returns the error that
// fails them all (nil: committed), and may set errs[i] for a write that
// failed alone (the others are committed).
type groupCommit[T any] func(vs []T, errs []error) error

// pending is one write waiting for its transaction.
type pending[T any] struct {
	v    T
	done chan error
}

// groupWriter runs its transactions on its own goroutine, from the
// store's Open to its Close.
type groupWriter[T any] struct {
	queue   chan pending[T]
	quit    chan struct{}
	stopped chan struct{}
}

// startGroupWriter starts a writer whose transactions commit runs.
func startGroupWriter[T any](commit groupCommit[T]) *groupWriter[T] {
	w := &groupWriter[T]{queue: make(chan pending[T], groupQueue), quit: make(chan struct{}), stopped: make(chan struct{})}
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
	p := pending[T]{v: v, done: make(chan error, 1)}
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
	for {
		select {
		case p := <-w.queue:
			batch = append(batch[:0], p)
		case <-w.quit:
			w.refuseWaiting()
			return
		}
	more:
		for len(batch) < groupMaxBatch {
			select {
			case p := <-w.queue:
				batch = append(batch, p)
			default:
				break more
			}
		}
		vs = vs[:0]
		for _, p := range batch {
			vs = append(vs, p.v)
		}
		clear(errs)
		err := commit(vs, errs[:len(batch)])
		for i, p := range batch {
			if err != nil {
				p.done <- err
			} else {
				p.done <- errs[i]
			}
		}
	}
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
