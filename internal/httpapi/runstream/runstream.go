// Package runstream writes one agent run as a Server-Sent Events stream:
// the mechanics every streaming surface shares, around an sse.Stream. It
// opens the stream lazily (at the first write, or at once with its headers
// held until the run's first request to the network is out), keeps it alive
// with heartbeats, coalesces the events an agent says arrive together
// (agent.Event.More), ends it (no heartbeat after the last event) and turns
// a panic of the run into an error event and the terminal event(s), once.
//
// What the events look like on the wire is the surface's: an Encoder turns
// each agent event into payloads (bytes, so that a surface encodes its
// tokens by hand, without a new allocation per token) and gives the
// heartbeat, the error and the terminal payloads.
package runstream

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"runtime/debug"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi"
	"agentchat/internal/sse"
)

// Encoder is one surface's wire form of an agent run.
type Encoder interface {
	// Event writes the payloads of ev through w (Send, SendNow, Queue,
	// Start, Finish): none for an event the surface does not carry.
	Event(w *Writer, ev agent.Event)
	// Heartbeat writes one heartbeat on s (a comment, or an event written
	// with s.UnnumberedJSON).
	Heartbeat(s *sse.Stream)
	// Failure is the payload of the error event written when a panic
	// stopped the run after the stream opened (nil: none).
	Failure() []byte
	// Terminal are the payloads of the stream's last events, in order.
	Terminal() [][]byte
}

// Options tune a Writer; every field is optional.
type Options struct {
	// Stream is the stream when it is open already (another part of the
	// handler started it): the writer writes on it and never opens one.
	Stream *sse.Stream
	// Heartbeat is the idle gap before a heartbeat (Encoder.Heartbeat);
	// zero or less: none.
	Heartbeat time.Duration
	// Opening is called with the response headers right before the
	// stream opens (they leave with it).
	Opening func(http.Header)
	// Opened is called once, right after the writer opened the stream;
	// what it queues (s.QueueData) leaves with the next event.
	Opened func(s *sse.Stream)
	// Cancel, when set, is called when a write of an event fails
	// (typically: the client went away), to stop the run (in Lambda a gone
	// client does not cancel the request context); a failed write of the
	// terminal events does not call it.
	Cancel context.CancelFunc
	// Logger logs a panic (nil: the request's logger, httpapi.Logger).
	Logger *slog.Logger
	// PanicLog is the message a panic is logged with ("stream panicked"
	// when empty).
	PanicLog string
	// Panicked is called after a panic was logged, before the error
	// event is written (whether it is written or not).
	Panicked func()
	// Unopened answers w instead of the error event when a panic came
	// before the stream opened: the response is still free (a 500).
	Unopened func(w http.ResponseWriter)
	// Abort lets an http.ErrAbortHandler panic go on, unlogged (the server
	// aborts the response), instead of recovering it.
	Abort bool
}

// Writer writes one run as SSE through an Encoder. Its methods are for the
// goroutine that runs the agent (the producer); the flush armed by FlushBy
// and the heartbeats run beside it through the sse.Stream, which is safe
// for that.
type Writer struct {
	w   http.ResponseWriter
	r   *http.Request
	enc Encoder
	o   Options
	s   *sse.Stream
	// more: the event being written has agent.Event.More, so what Send
	// writes is queued and leaves with the next flushed write.
	more bool
	// ended: the terminal events are out, nothing may follow them.
	ended bool
	// flushBy is the timer armed by FlushBy.
	flushBy *time.Timer
}

// New returns the writer of the run answering r on w. With o.Stream it
// writes on that stream (and starts its heartbeat, unless it has one);
// otherwise nothing is sent before the first write, or Open.
func New(w http.ResponseWriter, r *http.Request, enc Encoder, o Options) *Writer {
	rw := &Writer{w: w, r: r, enc: enc, o: o, s: o.Stream}
	if rw.s != nil {
		rw.s.Heartbeat(o.Heartbeat, enc.Heartbeat)
	}
	return rw
}

// Stream is the stream, nil until it opened.
func (w *Writer) Stream() *sse.Stream { return w.s }

// Opened reports whether the stream opened: from then on the response's
// status and headers are gone.
func (w *Writer) Opened() bool { return w.s != nil }

// Ended reports whether the terminal events were written.
func (w *Writer) Ended() bool { return w.ended }

// Open opens the stream without sending anything (status 200 and the
// headers leave with the first flushed write); it reports whether the
// stream was opened now.
func (w *Writer) Open() bool {
	if w.s != nil {
		return false
	}
	if w.o.Opening != nil {
		w.o.Opening(w.w.Header())
	}
	w.s = sse.Open(w.w)
	w.s.Heartbeat(w.o.Heartbeat, w.enc.Heartbeat)
	if w.o.Opened != nil {
		w.o.Opened(w.s)
	}
	return true
}

// FlushBy opens the stream (Open) and arranges for what it holds (the
// headers, what Opened queued) to leave as soon as the run's first request
// to the network is written — through the returned context, which the run
// must use — or once within passed, whichever comes first; an event
// flushed before sends it with itself. The timer stops at Close.
func (w *Writer) FlushBy(ctx context.Context, within time.Duration) context.Context {
	w.Open()
	s := w.s
	w.flushBy = time.AfterFunc(within, func() { _ = s.Flush() })
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { _ = s.Flush() },
	})
}

// Event writes ev through the Encoder. Its payloads written with Send are
// queued when ev.More (another event follows at once); without More,
// whatever the events before queued is flushed, also when ev wrote
// nothing.
func (w *Writer) Event(ev agent.Event) {
	w.more = ev.More
	w.enc.Event(w, ev)
	w.more = false
	if !ev.More {
		w.settle()
	}
}

// Send writes one event of payload b (b is not kept), opening the stream
// if needed: queued while the event being written has More, else flushed
// with what was queued before.
func (w *Writer) Send(b []byte) {
	w.write(b, !w.more)
}

// SendNow writes one event of payload b and flushes it, whatever More
// says.
func (w *Writer) SendNow(b []byte) { w.write(b, true) }

// Queue writes one event of payload b without flushing it: it leaves with
// the next flushed write (the terminal events at the latest).
func (w *Writer) Queue(b []byte) { w.write(b, false) }

func (w *Writer) write(b []byte, flush bool) {
	w.Open()
	var err error
	if flush {
		err = w.s.Data(b)
	} else {
		err = w.s.QueueData(b)
	}
	if err != nil {
		w.cancel()
	}
}

// Start opens the stream if needed and flushes what it holds: the
// answer has begun, though the event that says so has no payload.
func (w *Writer) Start() {
	if w.Open() {
		_ = w.s.Flush()
	}
}

// settle flushes what the events before queued.
func (w *Writer) settle() {
	if w.s == nil {
		return
	}
	if err := w.s.Flush(); err != nil {
		w.cancel()
	}
}

// cancel stops the run after a failed write.
func (w *Writer) cancel() {
	if w.o.Cancel != nil {
		w.o.Cancel()
	}
}

// Finish ends the stream: it stops the heartbeat (none comes after the
// last event) and writes the terminal payloads, opening the stream if
// needed; only once.
func (w *Writer) Finish() {
	if w.ended {
		return
	}
	w.Open()
	w.s.End()
	for _, b := range w.enc.Terminal() {
		_ = w.s.Data(b)
	}
	// Ended only once they are out: a panic while writing them still ends
	// the stream in Recover.
	w.ended = true
}

// Close stops the FlushBy timer and closes the stream (its heartbeat
// stops; later writes are dropped).
func (w *Writer) Close() {
	if w.flushBy != nil {
		w.flushBy.Stop()
	}
	if w.s != nil {
		w.s.Close()
	}
}

// Recover, deferred by the handler, turns a panic of the run into its
// log (with the stack) and, unless the terminal events are out, the
// Encoder's error event then the terminal events; before the stream
// opened, Options.Unopened answers instead. A panic must neither kill the
// process (a Lambda's) nor leave a stream without its end.
func (w *Writer) Recover() {
	p := recover()
	if p == nil {
		return
	}
	if w.o.Abort && p == http.ErrAbortHandler {
		panic(p)
	}
	ctx := w.r.Context()
	log, msg := w.o.Logger, w.o.PanicLog
	if log == nil {
		log = httpapi.Logger(ctx)
	}
	if msg == "" {
		msg = "stream panicked"
	}
	log.ErrorContext(ctx, msg, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	if w.o.Panicked != nil {
		w.o.Panicked()
	}
	switch {
	case w.ended:
	case w.s == nil && w.o.Unopened != nil:
		w.o.Unopened(w.w)
	default:
		w.more = false // the panic may have cut an event short
		w.Open()
		w.s.End()
		if b := w.enc.Failure(); b != nil {
			_ = w.s.Data(b)
		}
		w.Finish()
	}
}
