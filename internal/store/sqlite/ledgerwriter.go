package sqlite

import (
	"context"
	"errors"
	"time"

	"agentchat/internal/store"
)

// The usage ledger is written once per turn, by every turn: on a busy
// server most of the cost of an add is its own write transaction (BEGIN
// IMMEDIATE, commit), not its upsert. The ledger writer commits adds in
// groups instead (group commit): the first add waiting starts a
// transaction at once, and every add that arrives while one commits goes
// into the next, so a lone add waits for nobody and a burst shares its
// commits. Each AddUsage still returns only once its add is committed.

// Bounds of the ledger writer.
const (
	// ledgerQueue is how many adds may wait for the next transaction.
	ledgerQueue = 256
	// ledgerMaxBatch bounds the adds of one transaction.
	ledgerMaxBatch = 128
	// ledgerCommitTimeout bounds one transaction.
	ledgerCommitTimeout = 10 * time.Second
)

// errLedgerClosed is the error of an add to a closed store.
var errLedgerClosed = errors.New("store closed")

// usageAdd is one AddUsage waiting for its transaction.
type usageAdd struct {
	k    store.UsageKey
	d    store.Usage
	done chan error
}

// ledgerWriter runs the ledger's transactions on its own goroutine, from
// the store's Open to its Close.
type ledgerWriter struct {
	adds    chan usageAdd
	quit    chan struct{}
	stopped chan struct{}
}

// startLedgerWriter starts the writer of s's ledger.
func startLedgerWriter(commit func([]usageAdd) error) *ledgerWriter {
	w := &ledgerWriter{adds: make(chan usageAdd, ledgerQueue), quit: make(chan struct{}), stopped: make(chan struct{})}
	go w.run(commit)
	return w
}

// add queues one add and waits until its transaction committed, or ctx
// ends (the add may then still be committed).
func (w *ledgerWriter) add(ctx context.Context, k store.UsageKey, d store.Usage) error {
	select {
	case <-w.quit:
		return errLedgerClosed
	default:
	}
	a := usageAdd{k: k, d: d, done: make(chan error, 1)}
	select {
	case w.adds <- a:
	case <-w.quit:
		return errLedgerClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-a.done:
		return err
	case <-w.stopped:
		// Closed meanwhile: the add was in the last transaction, or it
		// was queued after the writer stopped and nobody will take it.
		select {
		case err := <-a.done:
			return err
		default:
			return errLedgerClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run commits the waiting adds in groups until close.
func (w *ledgerWriter) run(commit func([]usageAdd) error) {
	defer close(w.stopped)
	batch := make([]usageAdd, 0, ledgerMaxBatch)
	for {
		select {
		case a := <-w.adds:
			batch = append(batch[:0], a)
		case <-w.quit:
			w.refuseWaiting()
			return
		}
	more:
		for len(batch) < ledgerMaxBatch {
			select {
			case a := <-w.adds:
				batch = append(batch, a)
			default:
				break more
			}
		}
		err := commit(batch)
		for _, a := range batch {
			a.done <- err
		}
	}
}

// refuseWaiting answers the adds still queued at close.
func (w *ledgerWriter) refuseWaiting() {
	for {
		select {
		case a := <-w.adds:
			a.done <- errLedgerClosed
		default:
			return
		}
	}
}

// close stops the writer once its current transaction is done.
func (w *ledgerWriter) close() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	<-w.stopped
}
