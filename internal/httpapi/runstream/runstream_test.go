package runstream_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/runstream"
	"agentchat/internal/sse"
)

// recorder is a ResponseWriter that keeps what each flush sent.
type recorder struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	pending bytes.Buffer
	flushes []string
	fail    error // returned by every Write when set
	flushed chan struct{}
}

func newRecorder() *recorder {
	return &recorder{header: http.Header{}, flushed: make(chan struct{}, 100)}
}

func (rc *recorder) Header() http.Header { return rc.header }

func (rc *recorder) WriteHeader(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

func (rc *recorder) Write(b []byte) (int, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.fail != nil {
		return 0, rc.fail
	}
	return rc.pending.Write(b)
}

func (rc *recorder) Flush() {
	rc.mu.Lock()
	rc.flushes = append(rc.flushes, rc.pending.String())
	rc.pending.Reset()
	rc.mu.Unlock()
	select {
	case rc.flushed <- struct{}{}:
	default:
	}
}

// sent is what each flush sent, and what is written but not flushed.
func (rc *recorder) sent() ([]string, string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.flushes...), rc.pending.String()
}

// encoder writes a content event as its text (queued with More), an error
// event as nothing, and a tool_call event with SendNow.
type encoder struct {
	mu    sync.Mutex
	beats int
	beat  chan struct{}
}

// heartbeats counts the heartbeats written.
func (e *encoder) heartbeats() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.beats
}

func (e *encoder) Event(w *runstream.Writer, ev agent.Event) {
	switch ev.Type {
	case agent.EventContent:
		w.Send([]byte(ev.Content))
	case agent.EventToolCall:
		w.SendNow([]byte("call"))
	case agent.EventDone:
		w.Finish()
	}
}

func (e *encoder) Heartbeat(s *sse.Stream) {
	e.mu.Lock()
	e.beats++
	e.mu.Unlock()
	_ = s.Comment("beat")
	if e.beat != nil {
		select {
		case e.beat <- struct{}{}:
		default:
		}
	}
}

func (e *encoder) Failure() []byte    { return []byte("failed") }
func (e *encoder) Terminal() [][]byte { return [][]byte{[]byte("end"), []byte("[DONE]")} }

func content(text string, more bool) agent.Event {
	return agent.Event{Type: agent.EventContent, Content: text, More: more}
}

func request() *http.Request { return httptest.NewRequest(http.MethodPost, "/", nil) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestLazyOpen(t *testing.T) {
	rec := newRecorder()
	var opening, opened int
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{
		Opening: func(h http.Header) { opening++; h.Set("X-Test", "1") },
		Opened:  func(s *sse.Stream) { opened++; _ = s.QueueComment("open") },
	})
	defer rw.Close()
	rw.Event(agent.Event{Type: agent.EventError}) // writes nothing
	if rw.Opened() || rec.status != 0 || opening != 0 {
		t.Fatalf("opened before any payload: opened %v, status %d", rw.Opened(), rec.status)
	}
	rw.Event(content("a", false))
	flushes, pending := rec.sent()
	if want := []string{": open\n\ndata: a\n\n"}; !slices.Equal(flushes, want) || pending != "" {
		t.Fatalf("flushes %q pending %q, want %q", flushes, pending, want)
	}
	if opening != 1 || opened != 1 || rec.status != http.StatusOK || rec.header.Get("X-Test") != "1" ||
		rec.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("opening %d opened %d status %d headers %v", opening, opened, rec.status, rec.header)
	}
	rw.Start() // open already: nothing to send
	if flushes, _ := rec.sent(); len(flushes) != 1 {
		t.Fatalf("Start on an open stream flushed: %q", flushes)
	}
}

func TestStartSendsTheHeaders(t *testing.T) {
	rec := newRecorder()
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{})
	defer rw.Close()
	rw.Start()
	if flushes, _ := rec.sent(); !slices.Equal(flushes, []string{""}) || rec.status != http.StatusOK {
		t.Fatalf("flushes %q status %d, want the headers alone", flushes, rec.status)
	}
}

func TestFlushByWroteRequest(t *testing.T) {
	rec := newRecorder()
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{
		Opened: func(s *sse.Stream) { _ = s.QueueComment("stream open") },
	})
	defer rw.Close()
	ctx := rw.FlushBy(context.Background(), time.Hour)
	if flushes, pending := rec.sent(); len(flushes) != 0 || pending != ": stream open\n\n" {
		t.Fatalf("before the request: flushes %q pending %q", flushes, pending)
	}
	trace := httptrace.ContextClientTrace(ctx)
	if trace == nil || trace.WroteRequest == nil {
		t.Fatal("FlushBy's context has no WroteRequest hook")
	}
	trace.WroteRequest(httptrace.WroteRequestInfo{})
	if flushes, pending := rec.sent(); !slices.Equal(flushes, []string{": stream open\n\n"}) || pending != "" {
		t.Fatalf("after the request: flushes %q pending %q", flushes, pending)
	}
}

func TestFlushByWithin(t *testing.T) {
	rec := newRecorder()
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{
		Opened: func(s *sse.Stream) { _ = s.QueueComment("stream open") },
	})
	defer rw.Close()
	rw.FlushBy(context.Background(), time.Nanosecond)
	<-rec.flushed // the timer flushed: no request was written
	if flushes, _ := rec.sent(); !slices.Equal(flushes, []string{": stream open\n\n"}) {
		t.Fatalf("flushes %q", flushes)
	}
}

func TestGivenStream(t *testing.T) {
	rec := newRecorder()
	s := sse.Start(rec)
	called := false
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{
		Stream: s,
		Opened: func(*sse.Stream) { called = true },
	})
	defer rw.Close()
	if !rw.Opened() || rw.Stream() != s {
		t.Fatal("the given stream is not the writer's")
	}
	rw.Event(content("a", false))
	if flushes, _ := rec.sent(); called || !slices.Equal(flushes, []string{": stream open\n\n", "data: a\n\n"}) {
		t.Fatalf("Opened called %v, flushes %q", called, flushes)
	}
}

func TestCoalescing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  []agent.Event
		flushes []string
		pending string
	}{
		{"each alone", []agent.Event{content("a", false), content("b", false)},
			[]string{"data: a\n\n", "data: b\n\n"}, ""},
		{"queued while more follow", []agent.Event{content("a", true), content("b", true), content("c", false)},
			[]string{"data: a\n\ndata: b\n\ndata: c\n\n"}, ""},
		{"an event without payload flushes the queue", []agent.Event{content("a", true), {Type: agent.EventError}},
			[]string{"data: a\n\n"}, ""},
		{"an event without payload with more does not", []agent.Event{content("a", true), {Type: agent.EventError, More: true}},
			nil, "data: a\n\n"},
		{"SendNow flushes whatever more says", []agent.Event{content("a", true), {Type: agent.EventToolCall, More: true}},
			[]string{"data: a\n\ndata: call\n\n"}, ""},
		{"the terminal events flush the queue", []agent.Event{content("a", true), {Type: agent.EventDone, More: true}},
			[]string{"data: a\n\ndata: end\n\n", "data: [DONE]\n\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rw := runstream.New(rec, request(), &encoder{}, runstream.Options{})
			defer rw.Close()
			for _, ev := range tc.events {
				rw.Event(ev)
			}
			flushes, pending := rec.sent()
			if !slices.Equal(flushes, tc.flushes) || pending != tc.pending {
				t.Fatalf("flushes %q pending %q, want %q and %q", flushes, pending, tc.flushes, tc.pending)
			}
		})
	}
}

func TestQueueLeavesWithTheTerminal(t *testing.T) {
	rec := newRecorder()
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{})
	defer rw.Close()
	rw.Queue([]byte("finish"))
	rw.Queue([]byte("usage"))
	rw.Finish()
	want := []string{"data: finish\n\ndata: usage\n\ndata: end\n\n", "data: [DONE]\n\n"}
	if flushes, _ := rec.sent(); !slices.Equal(flushes, want) {
		t.Fatalf("flushes %q, want %q", flushes, want)
	}
}

func TestTerminalOnce(t *testing.T) {
	rec := newRecorder()
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{})
	defer rw.Close()
	rw.Event(agent.Event{Type: agent.EventDone})
	rw.Finish()
	if !rw.Ended() {
		t.Fatal("not ended after Finish")
	}
	if flushes, _ := rec.sent(); !slices.Equal(flushes, []string{"data: end\n\n", "data: [DONE]\n\n"}) {
		t.Fatalf("flushes %q", flushes)
	}
}

func TestNoHeartbeatAfterTheTerminal(t *testing.T) {
	rec := newRecorder()
	enc := &encoder{beat: make(chan struct{}, 1)}
	rw := runstream.New(rec, request(), enc, runstream.Options{Heartbeat: time.Millisecond})
	rw.Start()
	<-enc.beat // a heartbeat came while the stream was silent
	rw.Finish()
	after := enc.heartbeats()
	rw.Close()
	flushes, _ := rec.sent()
	all := strings.Join(flushes, "")
	if !strings.Contains(all, ": beat\n\n") {
		t.Fatalf("no heartbeat in %q", all)
	}
	if !strings.HasSuffix(all, "data: end\n\ndata: [DONE]\n\n") || enc.heartbeats() != after {
		t.Fatalf("a heartbeat after the terminal events: %q", all)
	}
}

func TestRecover(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs before the panic.
		before   func(rw *runstream.Writer)
		unopened bool
		want     string
		called   bool // Options.Unopened
	}{
		{"after the stream opened", func(rw *runstream.Writer) { rw.Event(content("a", false)) }, false,
			"data: a\n\ndata: failed\n\ndata: end\n\ndata: [DONE]\n\n", false},
		{"in the middle of an event with more", func(rw *runstream.Writer) { rw.Event(content("a", true)) }, false,
			"data: a\n\ndata: failed\n\ndata: end\n\ndata: [DONE]\n\n", false},
		{"after the terminal events", func(rw *runstream.Writer) { rw.Finish() }, false,
			"data: end\n\ndata: [DONE]\n\n", false},
		{"before the stream opened, with Unopened", func(*runstream.Writer) {}, true, "", true},
		{"before the stream opened, without Unopened", func(*runstream.Writer) {}, false,
			"data: failed\n\ndata: end\n\ndata: [DONE]\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			panicked, called := 0, false
			o := runstream.Options{Logger: quiet(), Panicked: func() { panicked++ }}
			if tc.unopened {
				o.Unopened = func(http.ResponseWriter) { called = true }
			}
			rw := runstream.New(rec, request(), &encoder{}, o)
			func() {
				defer rw.Close()
				defer rw.Recover()
				tc.before(rw)
				panic("boom")
			}()
			flushes, pending := rec.sent()
			if got := strings.Join(flushes, "") + pending; got != tc.want || called != tc.called || panicked != 1 {
				t.Fatalf("wrote %q (Unopened %v, Panicked %d), want %q (Unopened %v)", got, called, panicked, tc.want, tc.called)
			}
		})
	}
}

func TestRecoverAbort(t *testing.T) {
	for _, abort := range []bool{false, true} {
		rec := newRecorder()
		rw := runstream.New(rec, request(), &encoder{}, runstream.Options{Logger: quiet(), Abort: abort})
		var p any
		func() {
			defer func() { p = recover() }()
			defer rw.Recover()
			rw.Start()
			panic(http.ErrAbortHandler)
		}()
		if abort != (p == http.ErrAbortHandler) {
			t.Errorf("Abort %v: panic after Recover %v", abort, p)
		}
		if _, ended := rec.sent(); abort == rw.Ended() {
			t.Errorf("Abort %v: ended %v %q", abort, rw.Ended(), ended)
		}
		rw.Close()
	}
}

func TestCancelOnAFailedWrite(t *testing.T) {
	rec := newRecorder()
	rec.fail = errors.New("client gone")
	cancels := 0
	rw := runstream.New(rec, request(), &encoder{}, runstream.Options{Cancel: func() { cancels++ }})
	defer rw.Close()
	rw.Event(content("a", false))
	if cancels == 0 {
		t.Fatal("a failed write did not cancel the run")
	}
	n := cancels
	rw.Finish() // the terminal writes do not cancel
	if cancels != n {
		t.Fatalf("a terminal write cancelled (%d, then %d)", n, cancels)
	}
}

// discard is a ResponseWriter that drops what it is sent.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) Flush()                      {}

// SetWriteDeadline is there so that the stream does not ask again at
// every write (the error of a writer without it is a new value).
func (d *discard) SetWriteDeadline(time.Time) error { return nil }

// tokens is an encoder whose content event is always the same payload.
type tokens struct {
	encoder
	payload []byte
}

func (e *tokens) Event(w *runstream.Writer, _ agent.Event) { w.Send(e.payload) }

// BenchmarkEvent writes one content event a token, every other one
// queued: the writer adds no allocation per token.
func BenchmarkEvent(b *testing.B) {
	enc := &tokens{payload: []byte(`{"type":"content","content":"token"}`)}
	rw := runstream.New(&discard{header: http.Header{}}, request(), enc, runstream.Options{})
	defer rw.Close()
	rw.Start()
	ev := content("token", false)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev.More = i%2 == 0
		rw.Event(ev)
		i++
	}
}
