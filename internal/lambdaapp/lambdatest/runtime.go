package lambdatest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Runtime API paths.
const (
	runtimePrefix = "/2018-06-01/runtime/"
	nextPath      = runtimePrefix + "invocation/next"
	initErrorPath = runtimePrefix + "init/error"
)

// Runtime is an in-process fake of the Lambda Runtime API
// (AWS_LAMBDA_RUNTIME_API=Runtime.Addr) for running a built bootstrap as
// Lambda does: GET .../invocation/next hands out queued events with the
// Lambda-Runtime-* headers, POST .../invocation/{id}/response receives the
// response and .../error a failure. It speaks HTTP/1.1 on raw connections
// so that it sees each chunk of a streamed (chunked) response exactly as
// the function sent it, with its arrival time. Give each process its own
// Runtime, as Lambda gives each execution environment its own: an event
// queued while a killed process's connection is closing could be handed
// to that connection.
type Runtime struct {
	// Addr is host:port for AWS_LAMBDA_RUNTIME_API.
	Addr string
	// FunctionName is used in the invoked function ARN.
	FunctionName string

	ln     net.Listener
	queue  chan *Invocation
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu       sync.Mutex
	seq      int
	byID     map[string]*Invocation
	conns    map[net.Conn]struct{}
	initErrs []string
}

// NewRuntime starts a fake Runtime API on 127.0.0.1, closed in t.Cleanup.
func NewRuntime(t testing.TB, functionName string) *Runtime {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("runtime API: %v", err)
	}
	r := &Runtime{
		Addr: ln.Addr().String(), FunctionName: functionName, ln: ln,
		queue: make(chan *Invocation, 64), closed: make(chan struct{}),
		byID: map[string]*Invocation{}, conns: map[net.Conn]struct{}{},
	}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(r.Close)
	return r
}

// Close stops the fake: pending GET next requests fail, as when Lambda
// shuts an environment down.
func (r *Runtime) Close() {
	r.once.Do(func() {
		close(r.closed)
		_ = r.ln.Close()
		r.mu.Lock()
		for c := range r.conns {
			_ = c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
}

// InitErrors returns the bodies POSTed to /runtime/init/error.
func (r *Runtime) InitErrors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.initErrs...)
}

// Chunk is one piece of a response body as it arrived: one HTTP chunk of
// a streamed response, or the whole body of a buffered one.
type Chunk struct {
	Data []byte
	At   time.Time
}

// Invocation is one queued event and, once the function answers, its
// response.
type Invocation struct {
	ID       string
	Payload  []byte
	Deadline time.Time

	mu       sync.Mutex
	changed  chan struct{}
	taken    time.Time
	chunks   []Chunk
	finished bool
	result   Result
}

// Result is how the function answered an invocation.
type Result struct {
	// Streamed is true for a chunked (response streaming) body.
	Streamed bool
	// ContentType is the Content-Type of the response POST.
	ContentType string
	// Header holds the headers of the response POST.
	Header http.Header
	// Trailer holds the trailers of a streamed response (a function that
	// fails mid-stream reports Lambda-Runtime-Function-Error-Type there).
	Trailer http.Header
	// Body is the whole response (every chunk).
	Body []byte
	// Error is the body POSTed to .../error, when the function failed.
	Error []byte
}

// Invoke queues an event; the function gets it with a deadline timeout
// from now.
func (r *Runtime) Invoke(payload []byte, timeout time.Duration) *Invocation {
	r.mu.Lock()
	r.seq++
	inv := &Invocation{
		ID:       fmt.Sprintf("00000000-0000-4000-8000-%012d", r.seq),
		Payload:  payload,
		Deadline: time.Now().Add(timeout),
		changed:  make(chan struct{}),
	}
	r.byID[inv.ID] = inv
	r.mu.Unlock()
	r.queue <- inv
	return inv
}

// Taken returns when the function fetched the event (zero before).
func (inv *Invocation) Taken() time.Time {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.taken
}

// Chunk waits for the i-th body chunk (from 0) and returns it; io.EOF
// when the response ended with fewer chunks.
func (inv *Invocation) Chunk(ctx context.Context, i int) (Chunk, error) {
	for {
		inv.mu.Lock()
		if i < len(inv.chunks) {
			c := inv.chunks[i]
			inv.mu.Unlock()
			return c, nil
		}
		if inv.finished {
			inv.mu.Unlock()
			return Chunk{}, io.EOF
		}
		ch := inv.changed
		inv.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Chunk{}, fmt.Errorf("invocation %s: waiting for chunk %d: %w", inv.ID, i, ctx.Err())
		}
	}
}

// Wait waits for the response (or the error report) and returns it.
func (inv *Invocation) Wait(ctx context.Context) (*Result, error) {
	for {
		inv.mu.Lock()
		if inv.finished {
			res := inv.result
			inv.mu.Unlock()
			return &res, nil
		}
		ch := inv.changed
		inv.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("invocation %s: waiting for the response: %w", inv.ID, ctx.Err())
		}
	}
}

func (inv *Invocation) notifyLocked() {
	close(inv.changed)
	inv.changed = make(chan struct{})
}

func (inv *Invocation) addChunk(b []byte) {
	inv.mu.Lock()
	inv.chunks = append(inv.chunks, Chunk{Data: b, At: time.Now()})
	inv.result.Body = append(inv.result.Body, b...)
	inv.notifyLocked()
	inv.mu.Unlock()
}

func (inv *Invocation) finish(f func(*Result)) {
	inv.mu.Lock()
	f(&inv.result)
	inv.finished = true
	inv.notifyLocked()
	inv.mu.Unlock()
}

func (r *Runtime) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		r.conns[c] = struct{}{}
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() {
				r.mu.Lock()
				delete(r.conns, c)
				r.mu.Unlock()
				_ = c.Close()
			}()
			r.serve(c)
		}()
	}
}

// serve handles the requests of one connection (the runtime client keeps
// its connections alive).
func (r *Runtime) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		var ok bool
		switch {
		case req.Method == http.MethodGet && req.URL.Path == nextPath:
			ok = r.next(c, br)
		case req.Method == http.MethodPost && req.URL.Path == initErrorPath:
			body, _ := io.ReadAll(req.Body)
			r.mu.Lock()
			r.initErrs = append(r.initErrs, string(body))
			r.mu.Unlock()
			ok = reply(c, http.StatusAccepted, `{"status":"OK"}`)
		case req.Method == http.MethodPost && strings.HasPrefix(req.URL.Path, runtimePrefix+"invocation/"):
			ok = r.post(c, br, req)
		default:
			_, _ = io.Copy(io.Discard, req.Body)
			ok = reply(c, http.StatusNotFound, `{"errorMessage":"unknown path","errorType":"InvalidRequest"}`)
		}
		if !ok {
			return
		}
	}
}

// next hands out the next event (blocking until one is queued). While it
// waits it watches the connection, so that the event of a process killed
// while polling goes to the next process and is not lost; br is not read
// elsewhere until the watch ends.
func (r *Runtime) next(c net.Conn, br *bufio.Reader) bool {
	watch := make(chan error, 1)
	go func() { _, err := br.Peek(1); watch <- err }()
	var inv *Invocation
	select {
	case inv = <-r.queue:
	case <-watch: // the client hung up (or sent a request while polling)
		return false
	case <-r.closed:
		return false
	}
	if !r.deliver(c, inv) {
		return false
	}
	return <-watch == nil // the client's next request has begun
}

// deliver writes inv as the answer to GET next.
func (r *Runtime) deliver(c net.Conn, inv *Invocation) bool {
	inv.mu.Lock()
	inv.taken = time.Now()
	inv.notifyLocked()
	inv.mu.Unlock()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.ID)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.Deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:"+Region+":"+AccountID+":function:"+r.FunctionName)
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Parent=0000000000000000;Sampled=0")
	resp := &http.Response{StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1, Header: h,
		ContentLength: int64(len(inv.Payload)), Body: io.NopCloser(bytes.NewReader(inv.Payload))}
	return resp.Write(c) == nil
}

// post receives a response or an error report.
func (r *Runtime) post(c net.Conn, br *bufio.Reader, req *http.Request) bool {
	rest := strings.TrimPrefix(req.URL.Path, runtimePrefix+"invocation/")
	id, kind, _ := strings.Cut(rest, "/")
	r.mu.Lock()
	inv := r.byID[id]
	r.mu.Unlock()
	chunked := len(req.TransferEncoding) > 0 && req.TransferEncoding[0] == "chunked"
	if inv == nil || (kind != "response" && kind != "error") {
		_, _ = io.Copy(io.Discard, req.Body)
		return reply(c, http.StatusNotFound, `{"errorMessage":"unknown invocation","errorType":"InvalidRequestID"}`)
	}
	if kind == "error" {
		body, err := io.ReadAll(req.Body)
		inv.finish(func(res *Result) {
			res.Error, res.Header = body, req.Header.Clone()
			if len(body) == 0 {
				res.Error = []byte("(empty error report)")
			}
		})
		return err == nil && reply(c, http.StatusAccepted, `{"status":"OK"}`)
	}
	var trailer http.Header
	var err error
	if chunked {
		// Read the chunks off the wire ourselves, to see each one as sent.
		trailer, err = readChunks(br, inv.addChunk)
	} else {
		var body []byte
		body, err = io.ReadAll(req.Body)
		if len(body) > 0 {
			inv.addChunk(body)
		}
	}
	inv.finish(func(res *Result) {
		res.Streamed, res.ContentType, res.Header, res.Trailer = chunked, req.Header.Get("Content-Type"), req.Header.Clone(), trailer
		if err != nil {
			res.Error = []byte("response body: " + err.Error())
		}
	})
	return err == nil && reply(c, http.StatusAccepted, `{"status":"OK"}`)
}

// readChunks reads a chunked body from br, calling emit with each chunk,
// and returns the trailers.
func readChunks(br *bufio.Reader, emit func([]byte)) (http.Header, error) {
	tp := textproto.NewReader(br)
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, fmt.Errorf("chunk size: %w", err)
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseUint(strings.TrimSpace(size), 16, 32)
		if err != nil {
			return nil, fmt.Errorf("chunk size %q: %w", line, err)
		}
		if n == 0 {
			h, err := tp.ReadMIMEHeader()
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("trailers: %w", err)
			}
			return http.Header(h), nil
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("chunk data: %w", err)
		}
		if end, err := tp.ReadLine(); err != nil || end != "" {
			return nil, fmt.Errorf("chunk end %q: %v", end, err)
		}
		emit(buf)
	}
}

func reply(c net.Conn, status int, body string) bool {
	_, err := fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
	return err == nil
}
