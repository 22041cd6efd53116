package sse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// plainWriter is a ResponseWriter that is not an http.Flusher, like the
// Lambda function URL writer: every Write goes straight to the pipe.
type plainWriter struct {
	h  http.Header
	pw *io.PipeWriter
}

func (p *plainWriter) Header() http.Header         { return p.h }
func (p *plainWriter) WriteHeader(int)             {}
func (p *plainWriter) Write(b []byte) (int, error) { return p.pw.Write(b) }

func TestFraming(t *testing.T) {
	tests := []struct {
		name string
		emit func(*Stream)
		want string
	}{
		{"json", func(s *Stream) { _ = s.JSON(map[string]string{"type": "done"}) }, "data: {\"type\":\"done\"}\n\n"},
		{"raw done", func(s *Stream) { _ = s.Data([]byte("[DONE]")) }, "data: [DONE]\n\n"},
		{"multiline", func(s *Stream) { _ = s.Data([]byte("a\nb")) }, "data: a\ndata: b\n\n"},
		{"comment", func(s *Stream) { _ = s.Comment("ping\nx") }, ": ping x\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s := Start(rec)
			tc.emit(s)
			s.Close()
			body := rec.Body.String()
			if !strings.HasPrefix(body, ": stream open\n\n") {
				t.Fatalf("stream must open with a comment, got %q", body)
			}
			if got := strings.TrimPrefix(body, ": stream open\n\n"); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
				if rec.Header().Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, rec.Header().Get(k), v)
				}
			}
			if !rec.Flushed {
				t.Error("stream was not flushed")
			}
		})
	}
}

// TestEventsArriveUnbuffered reads events from a real net/http server while
// the handler is still blocked before writing the next one: each event must
// reach the client on its own.
func TestEventsArriveUnbuffered(t *testing.T) {
	next := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := Start(w)
		defer s.Close()
		for i := 0; i < 3; i++ {
			<-next
			_ = s.JSON(map[string]int{"n": i})
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readEvent := func() string {
		var lines []string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if line == "\n" {
				return strings.Join(lines, "")
			}
			lines = append(lines, line)
		}
	}
	if got := readEvent(); got != ": stream open\n" {
		t.Fatalf("first event %q", got)
	}
	for i := 0; i < 3; i++ {
		next <- struct{}{}
		want := "data: {\"n\":" + string(rune('0'+i)) + "}\n"
		if got := readEvent(); got != want {
			t.Fatalf("event %d = %q, want %q", i, got, want)
		}
	}
}

func TestNonFlusherWriter(t *testing.T) {
	pr, pw := io.Pipe()
	w := &plainWriter{h: http.Header{}, pw: pw}
	var s *Stream
	started := make(chan struct{})
	go func() {
		s = Start(w)
		close(started)
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || line != ": stream open\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	_, _ = br.ReadString('\n')
	<-started
	go func() { _ = s.JSON("x") }()
	line, err = br.ReadString('\n')
	if err != nil || line != "data: \"x\"\n" {
		t.Fatalf("event line %q, %v", line, err)
	}
	if s.Err() != nil {
		t.Fatalf("a writer without Flush must not be an error: %v", s.Err())
	}
}

func TestHeartbeatAfterSilence(t *testing.T) {
	rec := &lockedRecorder{ResponseRecorder: httptest.NewRecorder()}
	s := Start(rec)
	beats := make(chan struct{}, 10)
	s.Heartbeat(10*time.Millisecond, func(s *Stream) {
		_ = s.JSON(map[string]string{"type": "heartbeat"})
		beats <- struct{}{}
	})
	select {
	case <-beats:
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat after silence")
	}
	s.Close()
	if !strings.Contains(rec.body(), `data: {"type":"heartbeat"}`) {
		t.Fatalf("heartbeat not written: %q", rec.body())
	}
	if err := s.JSON("late"); err != ErrClosed {
		t.Fatalf("write after close = %v, want ErrClosed", err)
	}
}

func TestWriteErrorIsKept(t *testing.T) {
	pr, pw := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	w := &plainWriter{h: http.Header{}, pw: pw}
	s := Start(w)
	_ = pr.Close()
	if err := s.JSON("x"); err == nil {
		t.Fatal("write to a closed client must fail")
	}
	if s.Err() == nil {
		t.Fatal("Err must report the failure")
	}
}

type lockedRecorder struct {
	mu sync.Mutex
	*httptest.ResponseRecorder
}

func (l *lockedRecorder) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ResponseRecorder.Write(b)
}

func (l *lockedRecorder) body() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Body.String()
}

func BenchmarkJSONEvent(b *testing.B) {
	rec := httptest.NewRecorder()
	s := Start(rec)
	ev := map[string]string{"type": "content", "content": "hello", "session_id": "3f1c"}
	b.ReportAllocs()
	for b.Loop() {
		rec.Body.Reset()
		_ = s.JSON(ev)
	}
}

func TestNoHeartbeatAfterEnd(t *testing.T) {
	for i := 0; i < 50; i++ {
		rec := &lockedRecorder{ResponseRecorder: httptest.NewRecorder()}
		s := Start(rec)
		s.Heartbeat(time.Microsecond, func(s *Stream) { _ = s.Comment("beat") })
		time.Sleep(time.Duration(i%5) * 100 * time.Microsecond)
		s.End()
		_ = s.Data([]byte("[DONE]"))
		time.Sleep(time.Millisecond) // a heartbeat still running would write now
		s.Close()
		if body := rec.body(); !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Fatalf("the last event is not the last written: %q", body[max(0, len(body)-60):])
		}
	}
}

// TestStalledClientDoesNotBlockForever: a client that keeps the connection
// open but stops reading makes a write fail after the write timeout.
func TestStalledClientDoesNotBlockForever(t *testing.T) {
	result := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := Start(w)
		s.SetWriteTimeout(200 * time.Millisecond)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < 10000; i++ { // far more than the socket buffers hold
			if err := s.Data(chunk); err != nil {
				result <- err
				return
			}
		}
		result <- nil
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // never read
	select {
	case err := <-result:
		if err == nil {
			t.Fatal("writes to a client that never reads all succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write to a stalled client blocked")
	}
}

// TestNumberedEvents: after NumberEvents every event but UnnumberedJSON's
// starts with its id line, one id for a payload of several data lines,
// queued events numbered in order; comments carry none.
func TestNumberedEvents(t *testing.T) {
	rec := httptest.NewRecorder()
	s := Start(rec)
	_ = s.Data([]byte(`{"before":1}`))
	s.NumberEvents("turn-7")
	_ = s.Data([]byte(`{"a":1}`))
	_ = s.QueueData([]byte("two\nlines"))
	_ = s.UnnumberedJSON(map[string]string{"type": "heartbeat"})
	_ = s.Comment("ping")
	_ = s.JSON(map[string]int{"b": 2})
	want := ": stream open\n\ndata: {\"before\":1}\n\n" +
		"id: turn-7:1\ndata: {\"a\":1}\n\n" +
		"id: turn-7:2\ndata: two\ndata: lines\n\n" +
		"data: {\"type\":\"heartbeat\"}\n\n" +
		": ping\n\n" +
		"id: turn-7:3\ndata: {\"b\":2}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream:\n%q\nwant\n%q", got, want)
	}
}

// TestTee: the tee gets every numbered event (number and payload, not the
// unnumbered ones), also once the client is gone; a stream numbered after
// n goes on at n+1 with the same framing.
func TestTee(t *testing.T) {
	rec := httptest.NewRecorder()
	s := Start(rec)
	s.NumberEvents("t")
	var got []string
	s.Tee(func(seq int64, payload []byte) { got = append(got, fmt.Sprintf("%d=%s", seq, payload)) })
	_ = s.Data([]byte("a"))
	_ = s.UnnumberedJSON("beat")
	_ = s.QueueData([]byte("b\nc"))
	s.mu.Lock()
	s.err = errors.New("client gone")
	s.mu.Unlock()
	if err := s.Data([]byte("d")); err == nil {
		t.Fatal("a write after the client left succeeded")
	}
	if want := "[1=a 2=b\nc 3=d]"; fmt.Sprint(got) != want {
		t.Fatalf("tee got %q, want %q", got, want)
	}

	replay := httptest.NewRecorder()
	r := Start(replay)
	r.NumberEventsAfter("t", 1)
	_ = r.Data([]byte("b\nc"))
	if want := "id: t:2\ndata: b\ndata: c\n\n"; !strings.HasSuffix(replay.Body.String(), want) || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("replayed %q and first sent %q, both want %q", replay.Body.String(), rec.Body.String(), want)
	}
}
