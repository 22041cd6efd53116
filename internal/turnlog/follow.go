package turnlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// Defaults of Follower.
const (
	// DefaultPoll is how often a follower reads the log of a running turn
	// when no batch is announced in-process: a batch reaches a follower on
	// another instance at most DefaultPoll after it is written.
	DefaultPoll = 150 * time.Millisecond
	// DefaultGrace is how long a follower keeps reading a log that is not
	// final once its turn no longer holds the session's lease (the last
	// batch is written right after the lease is released) before it takes
	// the turn for dead.
	DefaultGrace = store.AbortGrace
	// maxReadFailures is how many reads in a row may fail before Follow
	// gives up.
	maxReadFailures = 5
)

// Outcome is how a Follow ended.
type Outcome int

// Outcomes of Follow.
const (
	// Finished: the turn's last event was sent.
	Finished Outcome = iota
	// Interrupted: the turn stopped without its last event (its process
	// died), or its log is gone (the session was deleted, the log expired).
	Interrupted
	// Stopped: the context ended or emit failed (the client left).
	Stopped
)

// Follower follows turn logs for clients.
type Follower struct {
	// Logs is the store's turn logs.
	Logs store.TurnLogs
	// Hub wakes the follower when this process writes a batch (nil: it
	// polls only).
	Hub *Hub
	// Poll and Grace default to DefaultPoll and DefaultGrace.
	Poll  time.Duration
	Grace time.Duration
}

// Follow sends the events of page, then those logged after them, to emit
// in order, until the turn's last event. page is the first read of the log
// (store.TurnLogs.ReadTurnEvents of session k, with a turn). Reads are at
// most one per Poll, and one at once when the Hub announces a batch.
func (f *Follower) Follow(ctx context.Context, k store.Key, page *store.TurnEvents, emit func(seq int64, payload []byte) error) (Outcome, error) {
	poll, grace := f.Poll, f.Grace
	if poll <= 0 {
		poll = DefaultPoll
	}
	if grace <= 0 {
		grace = DefaultGrace
	}
	turn := page.Turn
	notified, unsubscribe := f.Hub.Subscribe(turn)
	defer unsubscribe()
	timer := time.NewTimer(poll)
	defer timer.Stop()
	var (
		deadSince time.Time
		failures  int
	)
	for {
		size := 0
		for i, ev := range page.Events {
			if err := emit(page.First+int64(i), ev); err != nil {
				return Stopped, nil
			}
			size += len(ev)
		}
		if page.Final {
			return Finished, nil
		}
		after := page.First + int64(len(page.Events)) - 1
		switch {
		case page.Live || len(page.Events) > 0:
			deadSince = time.Time{}
		case deadSince.IsZero():
			deadSince = time.Now()
		case time.Since(deadSince) > grace:
			return Interrupted, nil
		}
		if size < store.MaxTurnEventsRead/2 {
			// A full page may have more behind it: read on at once.
			// Otherwise wait for a batch.
			timer.Reset(poll)
			select {
			case <-ctx.Done():
				return Stopped, nil
			case <-notified:
			case <-timer.C:
			}
		}
		next, err := f.Logs.ReadTurnEvents(ctx, k, turn, after)
		switch {
		case ctx.Err() != nil:
			return Stopped, nil
		case errors.Is(err, store.ErrNotFound):
			return Interrupted, nil
		case err != nil:
			failures++
			if failures >= maxReadFailures {
				return Interrupted, fmt.Errorf("read the log of turn %s: %w", turn, err)
			}
			page = &store.TurnEvents{Turn: turn, First: after + 1, Live: true}
			continue
		case next.Turn == "":
			return Interrupted, nil
		}
		failures = 0
		page = next
		if len(page.Events) == 0 {
			page.First = after + 1
		}
	}
}
