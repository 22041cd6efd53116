// Package turnlog records the events of a streamed turn into the store's
// turn log (store.TurnLogs) in small batches, and follows a turn's log for
// a client that comes back after a network drop or opens a second view:
// first what was logged, then what is logged next, until the turn's last
// event. Followers in the process that runs the turn are woken by a Hub
// when a batch is written; others, on any instance, poll the log.
package turnlog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"agentchat/internal/store"
)

// Defaults of Options.
const (
	// DefaultFlushEvery is the longest an event waits before its batch is
	// written.
	DefaultFlushEvery = 100 * time.Millisecond
	// DefaultMaxEvents is the most events of one batch.
	DefaultMaxEvents = 64
	// DefaultMaxBytes is the most payload bytes of one batch (a larger
	// single event makes a batch of its own).
	DefaultMaxBytes = 256 << 10
	// writeTimeout bounds one batch's write.
	writeTimeout = 10 * time.Second
)

// Options tune a Recorder. Zero values take the defaults above.
type Options struct {
	FlushEvery time.Duration
	MaxEvents  int
	MaxBytes   int
	// Keep is how long a batch is kept at least after it is written
	// (default store.TurnLogKeep).
	Keep time.Duration
	// Hub, when set, is told of every batch written, for the followers of
	// this process.
	Hub *Hub
	// Logger receives failures to write a batch (default slog.Default()).
	Logger *slog.Logger
	// Stored, when set, is waited for before the first write: it returns
	// once the session is in the store, or why it will never be (nothing
	// is logged then).
	Stored func() error
}

func (o *Options) defaults() {
	if o.FlushEvery <= 0 {
		o.FlushEvery = DefaultFlushEvery
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Keep <= 0 {
		o.Keep = store.TurnLogKeep
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Recorder writes the numbered events of one turn's stream to its log. Add
// never waits for the store: a goroutine writes the batches, a batch at
// most FlushEvery after its first event or as soon as it holds MaxEvents
// events or MaxBytes bytes; Close writes the last batch, marked final.
type Recorder struct {
	logs store.TurnLogs
	key  store.Key
	turn string
	o    Options
	ctx  context.Context // the turn's values, never cancelled

	mu      sync.Mutex
	pending [][]byte
	bytes   int
	first   int64 // number of pending[0] (or of the next event when none)
	since   time.Time
	closed  bool
	failed  bool

	wake chan struct{} // a first event or a full batch
	stop chan struct{}
	done chan struct{}
}

// Start returns the recorder of turn on session k. Until its first batch
// is written, a client rejoining the session finds the turn by the
// session's lease, which it holds (store.TurnLogs): no batch is written
// only to mark it as started.
func Start(ctx context.Context, logs store.TurnLogs, k store.Key, turn string, o Options) *Recorder {
	o.defaults()
	r := &Recorder{
		logs: logs, key: k, turn: turn, o: o, ctx: context.WithoutCancel(ctx), first: 1,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go r.loop()
	return r
}

// Add takes event seq (its payload is copied). Events must come in order,
// numbered from 1; an event out of order is dropped and stops the log
// (a reader would see a gap).
func (r *Recorder) Add(seq int64, payload []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.failed {
		return
	}
	if seq != r.first+int64(len(r.pending)) {
		r.failed = true
		r.o.Logger.ErrorContext(r.ctx, "turn log: event out of order; the log stops", "turn", r.turn, "seq", seq, "want", r.first+int64(len(r.pending)))
		return
	}
	if len(r.pending) == 0 {
		r.since = time.Now()
	}
	r.pending = append(r.pending, append([]byte(nil), payload...))
	r.bytes += len(payload)
	if len(r.pending) == 1 || len(r.pending) >= r.o.MaxEvents || r.bytes >= r.o.MaxBytes {
		r.signal()
	}
}

// signal wakes the loop (coalesced).
func (r *Recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// loop writes a batch whenever one is due, until
// Close.
func (r *Recorder) loop() {
	defer close(r.done)
	if r.o.Stored != nil {
		if err := r.o.Stored(); err != nil {
			r.mu.Lock()
			r.failed = true
			r.mu.Unlock()
			return
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-r.wake:
		case <-timer.C:
		}
		for {
			b, wait := r.take(false)
			if b == nil {
				if wait > 0 {
					timer.Reset(wait)
				}
				break
			}
			r.write(*b)
		}
	}
}

// take returns the next batch of at most MaxEvents events and MaxBytes
// bytes (at least one event): only when it is due unless force, nil when
// nothing is pending (or not due). wait is how long until the batch of the
// events left pending is due (0: none left).
func (r *Recorder) take(force bool) (b *store.TurnEvents, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed || len(r.pending) == 0 {
		return nil, 0
	}
	full := len(r.pending) >= r.o.MaxEvents || r.bytes >= r.o.MaxBytes
	if left := r.o.FlushEvery - time.Since(r.since); !force && !full && left > 0 {
		return nil, left
	}
	n, size := 0, 0
	for n < len(r.pending) && n < r.o.MaxEvents && (n == 0 || size+len(r.pending[n]) <= r.o.MaxBytes) {
		size += len(r.pending[n])
		n++
	}
	b = &store.TurnEvents{Turn: r.turn, First: r.first, Events: r.pending[:n:n]}
	r.pending = append([][]byte(nil), r.pending[n:]...)
	r.bytes -= size
	r.first += int64(n)
	if len(r.pending) == 0 {
		return b, 0
	}
	r.since = time.Now()
	return b, r.o.FlushEvery
}

// write appends b; a failure stops the log (a later batch would leave a
// gap that readers cannot cross).
func (r *Recorder) write(b store.TurnEvents) {
	ctx, cancel := context.WithTimeout(r.ctx, writeTimeout)
	defer cancel()
	if err := r.logs.AppendTurnEvents(ctx, r.key, b, r.o.Keep); err != nil {
		r.mu.Lock()
		r.failed = true
		r.mu.Unlock()
		r.o.Logger.WarnContext(r.ctx, "turn log: write a batch; the log stops", "turn", r.turn, "first", b.First, "events", len(b.Events), "err", err)
		return
	}
	r.o.Hub.notify(r.turn)
}

// Close writes what is pending, the last batch marked final, and returns
// once it is written (or failed): call it after the turn's last event.
// When everything was written already, an empty final batch marks the
// end (store.TurnLogs).
func (r *Recorder) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	for {
		b, wait := r.take(true)
		if b == nil {
			break
		}
		b.Final = wait == 0
		r.write(*b)
		if b.Final {
			return
		}
	}
	r.mu.Lock()
	failed, first := r.failed, r.first
	r.mu.Unlock()
	if !failed {
		r.write(store.TurnEvents{Turn: r.turn, First: first, Final: true})
	}
}
