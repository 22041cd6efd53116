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
	"strings"
	"sync"
	"time"
)

// Stream writes events to one response. Its methods are safe for concurrent
// use (the heartbeat goroutine writes beside the producer).
type Stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	err     error
	closed  bool
	lastAt  time.Time
	stop    chan struct{}
	stopped chan struct{}
	buf     []byte
	timeout time.Duration
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
	Header(w.Header())
	s := &Stream{w: w, rc: http.NewResponseController(w), lastAt: time.Now(), timeout: WriteTimeout}
	w.WriteHeader(http.StatusOK)
	s.write([]byte(": stream open\n\n"))
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
	s.buf = s.buf[:0]
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
	return s.writeLocked(s.buf)
}

// Comment writes a `: text` comment line (ignored by clients) and flushes.
func (s *Stream) Comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	text = strings.NewReplacer("\r", " ", "\n", " ").Replace(text)
	return s.writeLocked([]byte(": " + text + "\n\n"))
}

// Heartbeat calls beat whenever interval passes without an event being
// written, until Close. beat usually writes an event through the stream
// (s.JSON or s.Comment). A non-positive interval disables heartbeats.
func (s *Stream) Heartbeat(interval time.Duration, beat func(*Stream)) {
	if interval <= 0 {
		return
	}
	s.mu.Lock()
	if s.stopped != nil || s.closed {
		s.mu.Unlock()
		return
	}
	s.stop = make(chan struct{})
	s.stopped = make(chan struct{})
	stop, stopped := s.stop, s.stopped
	s.mu.Unlock()

	go func() {
		defer close(stopped)
		t := time.NewTimer(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			s.mu.Lock()
			idle := time.Since(s.lastAt)
			failed := s.err != nil
			s.mu.Unlock()
			if failed {
				return
			}
			if idle >= interval {
				beat(s)
				t.Reset(interval)
			} else {
				t.Reset(interval - idle)
			}
		}
	}()
}

// End stops the heartbeat and waits until a heartbeat being written is
// out, so that the event written next (the stream's last) is really last.
func (s *Stream) End() {
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// Close ends the stream: it stops the heartbeat and waits for it to
// finish. Later writes are dropped with ErrClosed.
func (s *Stream) Close() {
	s.End()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// WriteTimeout bounds one write to a client that stopped reading.
const WriteTimeout = 30 * time.Second

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("sse stream closed")

func (s *Stream) write(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.writeLocked(b)
}

func (s *Stream) writeLocked(b []byte) error {
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	// A client that stops reading must not block the producer forever: each
	// write gets WriteTimeout, and the deadline is cleared after it so that
	// a later response on the same connection is not cut by a stale one.
	deadline := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)) == nil
	_, err := s.w.Write(b)
	if deadline {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		s.err = fmt.Errorf("write sse event: %w", err)
		return s.err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = fmt.Errorf("flush sse event: %w", err)
		return s.err
	}
	s.lastAt = time.Now()
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
