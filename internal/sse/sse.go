// Package sse writes Server-Sent Events: the framing (`data: ...\n\n` and
// `: comment` lines), a flush after every event, and heartbeats after a
// period of silence. It works on any http.ResponseWriter, flushing through
// http.ResponseController when the writer supports it, so that each event
// leaves the server as soon as it is written.
package sse

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stream writes events to one response. Its methods are safe for concurrent
// use (the heartbeat timer writes beside the producer).
type Stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	err     error
	closed  bool
	lastAt  time.Time
	hb      *heartbeat // nil until Heartbeat
	buf     []byte
	timeout time.Duration
	// deadline is true while a write deadline is set, at deadlineAt.
	deadline   bool
	deadlineAt time.Time
	// queued is true while something written is not flushed (the headers
	// of an Open stream, queued events).
	queued bool
	// idPrefix, once NumberEvents set it, starts the id of every event
	// but those written by Unnumbered; seq is the last number given.
	idPrefix string
	seq      int64
	// tee, when set, receives every numbered event (see Tee).
	tee func(seq int64, payload []byte)
}

// NumberEvents gives every event written from now on, but those written
// with UnnumberedJSON, an SSE `id:` line "<prefix>:<n>", n counting from 1,
// so that a client knows the last event it received (EventSource's
// Last-Event-ID). Clients that read only `data:` lines are unaffected.
func (s *Stream) NumberEvents(prefix string) { s.NumberEventsAfter(prefix, 0) }

// NumberEventsAfter is NumberEvents for a stream that goes on from event
// last of the sequence (a replay after the Last-Event-ID a client gave):
// the next numbered event is last+1.
func (s *Stream) NumberEventsAfter(prefix string, last int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idPrefix, s.seq = prefix, last
}

// Tee calls fn with the number and the payload of every numbered event
// written from now on, in order, whether or not it reaches the client (a
// client gone does not stop the record): the turn's event log. fn runs
// under the stream's lock and must not keep payload, nor block.
func (s *Stream) Tee(fn func(seq int64, payload []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tee = fn
}

// UnnumberedJSON is JSON without an event id, for an event that is not
// part of what a client may ask to receive again (a heartbeat).
func (s *Stream) UnnumberedJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode sse event: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frameAs(b, false)
	return s.writeLocked(s.buf, true)
}

// Header sets the SSE response headers on h.
func Header(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Connection", "keep-alive")
}

// Start writes the SSE headers with status 200 and a first comment, flushes
// them, and returns the stream. Headers set on w before Start are kept.
func Start(w http.ResponseWriter) *Stream {
	s := Open(w)
	s.write([]byte(": stream open\n\n"))
	return s
}

// Open is Start without the first comment and without a flush: the
// headers (status 200) leave with the first event written, in the same
// write. Use it when an event follows at once (write it with JSON or
// Data, or Queue it and flush with the next one); Flush sends the headers
// alone.
func Open(w http.ResponseWriter) *Stream {
	Header(w.Header())
	s := &Stream{w: w, rc: http.NewResponseController(w), lastAt: time.Now(), timeout: WriteTimeout, queued: true}
	w.WriteHeader(http.StatusOK)
	return s
}

// SetWriteTimeout changes how long one write may block (WriteTimeout by
// default).
func (s *Stream) SetWriteTimeout(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timeout = d
}

// Err returns the first write error (typically: the client went away).
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// JSON writes v as one `data:` event and flushes it.
func (s *Stream) JSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode sse event: %w", err)
	}
	return s.Data(b)
}

// Data writes one `data:` event whose payload is b (a payload with newlines
// is split over several data lines, as the SSE format requires) and flushes.
func (s *Stream) Data(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frame(b)
	return s.writeLocked(s.buf, true)
}

// QueueJSON writes v as one `data:` event without flushing it: it leaves
// with the next event that is flushed, or with Flush. Only for an event
// that another follows at once (the role chunk before the first token of
// an OpenAI stream, tokens the LLM sent together): every other event is
// flushed on its own.
func (s *Stream) QueueJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode sse event: %w", err)
	}
	return s.QueueData(b)
}

// QueueData is QueueJSON for a payload already encoded (b is not kept).
func (s *Stream) QueueData(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frame(b)
	return s.writeLocked(s.buf, false)
}

// Flush sends what was written and not yet flushed (the headers of an
// Open stream, queued events); it does nothing when all is out.
func (s *Stream) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.queued {
		return s.errLocked()
	}
	return s.writeLocked(nil, true)
}

// errLocked is the error a write would return now.
func (s *Stream) errLocked() error {
	if s.closed {
		return ErrClosed
	}
	return s.err
}

// frame sets s.buf to the event of payload b, numbered when NumberEvents
// asked for it.
func (s *Stream) frame(b []byte) { s.frameAs(b, true) }

// frameAs is frame; numbered false leaves the event without an id.
func (s *Stream) frameAs(b []byte, numbered bool) {
	s.buf = s.buf[:0]
	if numbered && s.idPrefix != "" {
		s.seq++
		s.buf = append(s.buf, "id: "...)
		s.buf = append(s.buf, s.idPrefix...)
		s.buf = append(s.buf, ':')
		s.buf = strconv.AppendInt(s.buf, s.seq, 10)
		s.buf = append(s.buf, '\n')
		if s.tee != nil {
			s.tee(s.seq, b)
		}
	}
	for {
		i := indexNewline(b)
		s.buf = append(s.buf, "data: "...)
		if i < 0 {
			s.buf = append(s.buf, b...)
			s.buf = append(s.buf, '\n')
			break
		}
		s.buf = append(s.buf, b[:i]...)
		s.buf = append(s.buf, '\n')
		b = b[i+1:]
	}
	s.buf = append(s.buf, '\n')
}

// Comment writes a `: text` comment line (ignored by clients) and flushes.
func (s *Stream) Comment(text string) error {
	return s.comment(text, true)
}

// QueueComment writes a comment without flushing it: it leaves with the
// next flush (Flush, or the next event flushed).
func (s *Stream) QueueComment(text string) error {
	return s.comment(text, false)
}

func (s *Stream) comment(text string, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	text = strings.NewReplacer("\r", " ", "\n", " ").Replace(text)
	return s.writeLocked([]byte(": "+text+"\n\n"), flush)
}

// Heartbeat calls beat whenever interval passes without an event being
// written, until End or Close. beat usually writes an event through the
// stream (s.JSON or s.Comment). A non-positive interval disables
// heartbeats. No goroutine waits meanwhile: one timer checks the silence
// when it fires and sets itself again for what is left of the interval.
func (s *Stream) Heartbeat(interval time.Duration, beat func(*Stream)) {
	if interval <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hb != nil || s.closed {
		return
	}
	hb := &heartbeat{}
	hb.mu.Lock() // the timer's first check waits until hb.t is set
	defer hb.mu.Unlock()
	hb.t = time.AfterFunc(interval, func() { s.checkBeat(hb, interval, beat) })
	s.hb = hb
}

// heartbeat is the state of a stream's heartbeat timer.
type heartbeat struct {
	// mu is held while the timer's check (and its beat) runs, and by End.
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

// checkBeat runs when the heartbeat timer fires: it beats after a silence
// of interval, and sets the timer again unless the stream failed.
func (s *Stream) checkBeat(hb *heartbeat, interval time.Duration, beat func(*Stream)) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.stopped {
		return
	}
	s.mu.Lock()
	idle := time.Since(s.lastAt)
	failed := s.err != nil
	s.mu.Unlock()
	if failed {
		return
	}
	next := interval - idle
	if idle >= interval {
		beat(s)
		next = interval
	}
	hb.t.Reset(next)
}

// End stops the heartbeat and waits until a heartbeat being written is
// out, so that the event written next (the stream's last) is really last.
func (s *Stream) End() {
	s.mu.Lock()
	hb := s.hb
	s.mu.Unlock()
	if hb == nil {
		return
	}
	hb.mu.Lock()
	defer hb.mu.Unlock()
	hb.stopped = true
	hb.t.Stop()
}

// Close ends the stream: it stops the heartbeat and waits for it to
// finish. Later writes are dropped with ErrClosed.
func (s *Stream) Close() {
	s.End()
	s.mu.Lock()
	s.closed = true
	if s.deadline {
		// No deadline may outlive the stream.
		_ = s.rc.SetWriteDeadline(time.Time{})
		s.deadline = false
	}
	s.mu.Unlock()
}

// WriteTimeout bounds one write to a client that stopped reading (a write
// gets at least half of it).
const WriteTimeout = 30 * time.Second

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("sse stream closed")

func (s *Stream) write(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.writeLocked(b, true)
}

// writeLocked writes b (nothing when empty) and flushes when flush is set.
func (s *Stream) writeLocked(b []byte, flush bool) error {
	if err := s.errLocked(); err != nil {
		return err
	}
	// A client that stops reading must not block the producer forever: a
	// write deadline covers every write and its flush (the flush is where a
	// small event really leaves; Write only fills the response's buffer).
	// It is set WriteTimeout ahead and moved only once less than half of it
	// is left, so that a stream of tokens does not reset the connection's
	// timer twice per event: a write gets between half of WriteTimeout and
	// all of it. Close clears it, so that a later response on the same
	// connection is not cut by a stale one.
	now := time.Now()
	if left := s.deadlineAt.Sub(now); !s.deadline || left < s.timeout/2 || left > s.timeout {
		at := now.Add(s.timeout)
		if s.rc.SetWriteDeadline(at) == nil {
			s.deadline, s.deadlineAt = true, at
		}
	}
	var err error
	if len(b) > 0 {
		if _, err = s.w.Write(b); err != nil {
			err = fmt.Errorf("write sse event: %w", err)
		}
	}
	if err == nil && flush {
		if ferr := s.rc.Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
			err = fmt.Errorf("flush sse event: %w", ferr)
		}
	}
	if err != nil {
		if s.deadline {
			_ = s.rc.SetWriteDeadline(time.Time{})
			s.deadline = false
		}
		s.err = err
		return s.err
	}
	s.lastAt = now
	s.queued = !flush && (s.queued || len(b) > 0)
	return nil
}

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}
