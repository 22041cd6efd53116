package sse

import (
	"net/http/httptest"
	"testing"
	"time"
)

// flushRecorder counts flushes.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushRecorder) Flush() {
	f.flushes++
	f.ResponseRecorder.Flush()
}

// TestOpenQueuesUntilTheFirstEvent: Open and QueueJSON send nothing; the
// next event flushes headers, the queued event and itself at once.
func TestOpenQueuesUntilTheFirstEvent(t *testing.T) {
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	s := Open(rec)
	defer s.Close()
	if rec.Header().Get("Content-Type") != "text/event-stream" || rec.Code != 200 {
		t.Fatalf("headers %v, status %d", rec.Header(), rec.Code)
	}
	if err := s.QueueJSON(map[string]string{"role": "assistant"}); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 0 {
		t.Fatalf("%d flushes before the first event", rec.flushes)
	}
	if err := s.JSON(map[string]string{"content": "Hi"}); err != nil {
		t.Fatal(err)
	}
	want := "data: {\"role\":\"assistant\"}\n\ndata: {\"content\":\"Hi\"}\n\n"
	if got := rec.Body.String(); got != want || rec.flushes != 1 {
		t.Fatalf("body %q after %d flushes, want %q after 1", got, rec.flushes, want)
	}
	if err := s.Flush(); err != nil || rec.flushes != 2 {
		t.Fatalf("Flush: %v, %d flushes", err, rec.flushes)
	}
}

// TestOpenFlushSendsTheHeaders: a stream opened with nothing to say yet
// can send its headers alone.
func TestOpenFlushSendsTheHeaders(t *testing.T) {
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	s := Open(rec)
	if err := s.Flush(); err != nil || rec.flushes != 1 || rec.Body.Len() != 0 {
		t.Fatalf("Flush: %v, %d flushes, body %q", err, rec.flushes, rec.Body.String())
	}
	s.Close()
	if err := s.QueueJSON("x"); err != ErrClosed {
		t.Fatalf("QueueJSON after Close: %v, want ErrClosed", err)
	}
}

// deadlineRecorder records the write deadlines set through
// http.ResponseController.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// TestQueuedWritesShareOneDeadline: queued events and the flush after them
// are under one deadline, set once and cleared by the flush; Close clears
// a deadline that queued events left.
func TestQueuedWritesShareOneDeadline(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	s := Open(rec)
	for i := range 3 {
		_ = s.QueueJSON(i)
	}
	_ = s.JSON(3)
	if n := len(rec.deadlines); n != 2 || rec.deadlines[0].IsZero() || !rec.deadlines[1].IsZero() {
		t.Fatalf("deadlines %v: want one set and one clear", rec.deadlines)
	}
	_ = s.QueueJSON(4)
	s.Close()
	if n := len(rec.deadlines); n != 4 || !rec.deadlines[3].IsZero() {
		t.Fatalf("deadlines %v: Close must clear the one left by a queued event", rec.deadlines)
	}
}
