package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/httpapi/runstream"
	"agentchat/internal/sse"
)

// openaiStream is what the encoders of the /v1 streams share
// (runstream.Encoder): JSON events, keep-alive comments, the error chunk
// of a panic and data: [DONE] last.
type openaiStream struct {
	// cancel stops the run when the client cannot be written to (in Lambda
	// a gone client does not cancel the request context).
	cancel context.CancelFunc
}

// send writes v as one data event (queued while the event being written
// has More).
func (o *openaiStream) send(w *runstream.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		o.cancel()
		return
	}
	w.Send(b)
}

// fail writes the error event of e: data: {"error":{...}}, the error
// object of the answer e would be before the stream started (never a null
// error field, which some SDKs take for an error).
func (o *openaiStream) fail(w *runstream.Writer, e *openaierr.Error) { o.send(w, e.Body()) }

// Heartbeat writes a keep-alive comment.
func (o *openaiStream) Heartbeat(s *sse.Stream) { _ = s.Comment("keep-alive") }

// Failure is the error chunk of a run a panic stopped.
func (o *openaiStream) Failure() []byte {
	b, err := json.Marshal(internalError("An internal error stopped the response.").Body())
	if err != nil {
		return nil
	}
	return b
}

// Terminal is data: [DONE], after which no keep-alive comes.
func (o *openaiStream) Terminal() [][]byte { return [][]byte{[]byte("[DONE]")} }

// tokenStream encodes the events of a /v1/chat run: data: {"token":"..."}
// per content delta.
type tokenStream struct {
	openaiStream
	text openaiwire.Steps
}

// Event writes the token of a content event; any other event but an
// error starts the stream.
func (ts *tokenStream) Event(w *runstream.Writer, ev agent.Event) {
	switch ev.Type {
	case agent.EventContent:
		ts.send(w, openaiwire.Token{Token: ts.text.Text(ev)})
	case agent.EventError:
		// Sent once the run returned, mapped from res.Err as the same
		// failure before the stream would be.
	default:
		w.Start()
	}
}

// newStream returns the writer of a /v1 stream of agent a. It starts the
// SSE response at the first event, so that a failure before any event can
// still be answered with a status; opened is called right after (what it
// queues leaves with that event). A /v1 stream starts with its first chunk
// right away: no opening comment (go-openai folds every comment line it
// meets into the text it parses an error event from, so a comment before a
// mid-stream error would hide the error's message; later keep-alive
// comments are needed and kept).
func (g *Gateway) newStream(w http.ResponseWriter, r *http.Request, a *agent.Agent, enc runstream.Encoder, cancel context.CancelFunc, opened func(*sse.Stream)) *runstream.Writer {
	// The headers leave with the first event, before any tool has run, so
	// an agent that may have side effects must say it up front; an error
	// answered before the stream started carries the header only when the
	// error says so.
	var opening func(http.Header)
	if mayHaveSideEffects(a) {
		opening = noRetry
	}
	return runstream.New(w, r, enc, runstream.Options{
		Heartbeat: g.o.Heartbeat,
		Opening:   opening,
		Opened:    opened,
		Cancel:    cancel,
		Logger:    g.logger(r),
		PanicLog:  msgPanicked,
		Unopened:  failInternal,
		Abort:     true,
	})
}

// noRetry says in h that the request must not be retried.
func noRetry(h http.Header) { h.Set(openaierr.HeaderShouldRetry, "false") }

// failInternal answers a panic before a stream started: a 500.
func failInternal(w http.ResponseWriter) { openaierr.Write(w, internalError("Internal server error")) }

// msgPanicked is the log message of a panic of a handler.
const msgPanicked = "gateway handler panicked"

// recoverSync, deferred by a handler that answers at once, turns its panic
// into a 500. A panic must not kill a Lambda process.
func (g *Gateway) recoverSync(w http.ResponseWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	g.logger(r).ErrorContext(r.Context(), msgPanicked, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	failInternal(w)
}

// failStream sends the error event of a run that failed after its stream
// started: the error object failRun or failLate would answer for the same
// failure (the status and headers are gone with the stream's start).
func (g *Gateway) failStream(r *http.Request, w *runstream.Writer, o *openaiStream, err error, human string) {
	o.fail(w, g.runFailed(r, err, human))
}
