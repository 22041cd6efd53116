package sse

import (
	"net/http/httptest"
	"strings"
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
	// All is out: Flush costs nothing; a queued event is flushed by it.
	if err := s.Flush(); err != nil || rec.flushes != 1 {
		t.Fatalf("Flush with nothing queued: %v, %d flushes, want 1", err, rec.flushes)
	}
	if err := s.QueueData([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil || rec.flushes != 2 || !strings.HasSuffix(rec.Body.String(), "data: x\n\n") {
		t.Fatalf("Flush of a queued event: %v, %d flushes, body %q", err, rec.flushes, rec.Body.String())
	}
	if err := s.Flush(); err != nil || rec.flushes != 2 {
		t.Fatalf("second Flush: %v, %d flushes, want 2", err, rec.flushes)
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

// TestWriteDeadlineRolls: one write deadline covers a run of events,
// queued or flushed, and is moved only once less than half of the write
// timeout is left (or a shorter timeout is set); Close clears it.
func TestWriteDeadlineRolls(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	s := Open(rec)
	for i := range 3 {
		_ = s.QueueJSON(i)
	}
	for i := range 20 {
		_ = s.JSON(i)
	}
	if n := len(rec.deadlines); n != 1 || rec.deadlines[0].IsZero() {
		t.Fatalf("deadlines %v after 23 events: want one set", rec.deadlines)
	}
	s.SetWriteTimeout(10 * time.Millisecond)
	_ = s.JSON("shorter timeout")
	if n := len(rec.deadlines); n != 2 || rec.deadlines[1].After(time.Now().Add(10*time.Millisecond)) {
		t.Fatalf("deadlines %v: a shorter timeout must move the deadline at the next write", rec.deadlines)
	}
	time.Sleep(20 * time.Millisecond) // the deadline is past: the next write moves it
	_ = s.JSON("later")
	if n := len(rec.deadlines); n != 3 || !rec.deadlines[2].After(rec.deadlines[1]) {
		t.Fatalf("deadlines %v: an expiring deadline must be moved before a write", rec.deadlines)
	}
	s.Close()
	if n := len(rec.deadlines); n != 4 || !rec.deadlines[3].IsZero() {
		t.Fatalf("deadlines %v: Close must clear the deadline", rec.deadlines)
	}
}
