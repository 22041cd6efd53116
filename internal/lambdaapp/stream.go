package lambdaapp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"agentchat/internal/httpapi"
)

// RunGrace is how long before the Lambda deadline a streaming request is
// cancelled, so that the handler can end its stream and persist the turn
// before the runtime freezes or kills the process. When the invocation has
// less than twice RunGrace left, half of what is left is kept instead.
const RunGrace = 10 * time.Second

// FunctionURL returns the Lambda handler of a streaming function:
// lambdaurl.Wrap of h (h already carries the middleware Func.Handler adds).
func FunctionURL(h http.Handler) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return lambdaurl.Wrap(h)
}

// streamMiddleware bounds the request by the Lambda deadline less RunGrace,
// cancels it when a write fails (the client went away: in Lambda nothing
// else cancels the context), recovers any panic the router lets through
// (a panic in a lambdaurl handler kills the process), and drops the CORS
// headers the router set (see StripCORS).
func streamMiddleware(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := Bound(r.Context(), RunGrace)
		defer cancel()
		cw := &tracker{ResponseWriter: w, onWriteError: cancel, beforeHeader: StripCORS}
		defer func() {
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					log.Error("stream handler panic", "panic", fmt.Sprint(p), "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
				}
				if !cw.started() {
					httpapi.Error(cw, r, http.StatusInternalServerError, "Internal server error")
				}
			}
			// lambdaurl sends the headers of a handler that wrote nothing
			// itself, after it returns.
			cw.prepareHeader()
		}()
		next.ServeHTTP(cw, r.WithContext(ctx))
	})
}

// StripCORS deletes the Access-Control-* headers of h. A function URL with
// a Cors configuration answers CORS preflights itself and adds its own
// Access-Control-* headers to every response, on top of the function's: a
// header the router also set would reach the browser twice ("*, *"), which
// browsers reject. Streaming functions therefore leave CORS to the
// function URL (template.yaml, FunctionUrlConfig.Cors).
func StripCORS(h http.Header) {
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), corsPrefix) {
			delete(h, k)
		}
	}
}

// corsPrefix starts the name of every CORS response header.
const corsPrefix = "Access-Control-"

// Bound returns ctx bounded by its deadline less grace, or less half of
// what is left when that is under twice grace (ctx unchanged but for a
// cancel func when it has no deadline). Lambda functions use it to stop
// their work while there is still time to persist it and answer.
func Bound(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	if left := time.Until(deadline); left < 2*grace {
		grace = left / 2
	}
	return context.WithDeadline(ctx, deadline.Add(-grace))
}

// tracker remembers whether the response started, calls beforeHeader
// (when set) once with the headers before they are sent, and calls
// onWriteError (when set) on a failed write. It is safe for concurrent use
// (SSE heartbeats write from their own goroutine).
type tracker struct {
	http.ResponseWriter
	onWriteError func()
	beforeHeader func(http.Header)
	mu           sync.Mutex
	wrote        bool
	prepared     bool
}

// prepareHeaderLocked runs beforeHeader once; t.mu is held.
func (t *tracker) prepareHeaderLocked() {
	if !t.prepared {
		t.prepared = true
		if t.beforeHeader != nil {
			t.beforeHeader(t.ResponseWriter.Header())
		}
	}
}

// prepareHeader runs beforeHeader unless it already ran.
func (t *tracker) prepareHeader() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prepareHeaderLocked()
}

func (t *tracker) WriteHeader(code int) {
	t.mu.Lock()
	t.prepareHeaderLocked()
	t.wrote = true
	t.mu.Unlock()
	t.ResponseWriter.WriteHeader(code)
}

func (t *tracker) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.prepareHeaderLocked()
	t.wrote = true
	t.mu.Unlock()
	n, err := t.ResponseWriter.Write(b)
	if err != nil && t.onWriteError != nil {
		t.onWriteError()
	}
	return n, err
}

// FlushError flushes the underlying writer, if it can flush: a flush sends
// the headers, so beforeHeader runs first.
func (t *tracker) FlushError() error {
	t.prepareHeader()
	err := http.NewResponseController(t.ResponseWriter).Flush()
	if err == nil {
		t.mu.Lock()
		t.wrote = true
		t.mu.Unlock()
	}
	return err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *tracker) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *tracker) started() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wrote
}
