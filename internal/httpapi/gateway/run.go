package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/sse"
)

// HeaderAgentID names the agent that answered.
const HeaderAgentID = "X-Agent-Id"

// resolve picks the agent of a request (agent_id → model → fallback) and
// the model name to report: the agent's id, or the client's own model name
// when that name matched no agent (a client asking for "gpt-3.5-turbo"
// gets its model name back, answered by the fallback agent).
func (g *Gateway) resolve(rr *openaiwire.RunRequest) (*agent.Agent, string, error) {
	if g.o.Agents == nil {
		return nil, "", errNoRegistry
	}
	if g.o.Runtime == nil {
		return nil, "", errNoRuntime
	}
	a := g.o.Agents.Resolve(rr.AgentID, rr.Model)
	if a == nil {
		return nil, "", fmt.Errorf("gateway: no agent %q or %q and no fallback agent", rr.AgentID, rr.Model)
	}
	model := a.ID
	if rr.Model != "" && rr.AgentID != a.ID && rr.Model != a.ID {
		model = rr.Model
	}
	rr.Req.AgentID = a.ID
	return a, model, nil
}

// mayHaveSideEffects reports whether running a may change something
// outside agentchat: one of its tools has side effects, or it chooses its
// tools per turn (Prepare), so that cannot be ruled out before the run.
func mayHaveSideEffects(a *agent.Agent) bool {
	if a.Prepare != nil {
		return true
	}
	for _, t := range agent.Tools(a.Skills) {
		if t.SideEffects {
			return true
		}
	}
	return false
}

// runContext bounds a run by Options.Timeout; it is also cancelled when the
// client goes away (locally) or a write to it fails (see streamer).
func (g *Gateway) runContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(r.Context(), g.o.Timeout, errDeadline)
}

// userID is the caller's user id.
func userID(r *http.Request) string {
	id, _ := auth.FromContext(r.Context())
	return id.UserID
}

// streamer starts an SSE response at the first event, so that a failure
// before any event can still be answered with a status.
type streamer struct {
	w         http.ResponseWriter
	heartbeat time.Duration
	// noRetry sends x-should-retry: false with the stream's headers. They
	// leave with the first event, before any tool has run, so an agent that
	// may have side effects must say it up front; an error answered before
	// the stream started carries the header only when the error says so.
	noRetry bool
	// cancel stops the run when the client cannot be written to (in Lambda
	// a gone client does not cancel the request context).
	cancel context.CancelFunc
	// opened is called once, right after the stream started; what it
	// writes (with s.QueueJSON) leaves with the next event.
	opened func()
	s      *sse.Stream
	// ended: data: [DONE] is out, nothing may follow it.
	ended bool
	// more: the event being sent has agent.Event.More, so its chunks are
	// queued and leave with the next flushed write (see settle).
	more bool
}

func (st *streamer) started() bool { return st.s != nil }

// start starts the stream and sends its headers at once.
func (st *streamer) start() {
	if st.open() {
		_ = st.s.Flush()
	}
}

// open starts the stream without sending anything, for an event written
// right after: the headers, what opened queued and that event then leave
// in one write. It reports whether the stream was started now. A /v1
// stream starts with its first chunk right away: no opening comment
// (go-openai folds every comment line it meets into the text it parses an
// error event from, so a comment before a mid-stream error would hide the
// error's message; later keep-alive comments are needed and kept).
func (st *streamer) open() bool {
	if st.s != nil {
		return false
	}
	if st.noRetry {
		st.w.Header().Set(openaierr.HeaderShouldRetry, "false")
	}
	st.s = sse.Open(st.w)
	st.s.Heartbeat(st.heartbeat, func(s *sse.Stream) { _ = s.Comment("keep-alive") })
	if st.opened != nil {
		st.opened()
	}
	return true
}

// send writes one data event (starting the stream if needed).
func (st *streamer) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		st.cancel()
		return
	}
	st.sendData(b)
}

// sendData writes one data event already encoded (b is not kept),
// starting the stream if needed; it is queued while more is set.
func (st *streamer) sendData(b []byte) {
	st.open()
	var err error
	if st.more {
		err = st.s.QueueData(b)
	} else {
		err = st.s.Data(b)
	}
	if err != nil {
		st.cancel()
	}
}

// event runs send, which writes the chunks of one event: they are queued
// when more (agent.Event.More: another event follows at once), else
// flushed with whatever the events before queued, also when send wrote
// nothing.
func (st *streamer) event(more bool, send func()) {
	st.more = more
	send()
	st.more = false
	if !more {
		st.settle()
	}
}

// settle flushes what the events before queued.
func (st *streamer) settle() {
	if st.s == nil {
		return
	}
	if err := st.s.Flush(); err != nil {
		st.cancel()
	}
}

// done writes the closing data: [DONE], after which no keep-alive comes.
func (st *streamer) done() {
	st.open()
	st.s.End()
	_ = st.s.Data([]byte("[DONE]"))
	st.ended = true
}

// close stops the heartbeat.
func (st *streamer) close() {
	if st.s != nil {
		st.s.Close()
	}
}

// fail writes the error event of e: data: {"error":{...}}, the error
// object of the answer e would be before the stream started (never a null
// error field, which some SDKs take for an error).
func (st *streamer) fail(e *openaierr.Error) { st.send(e.Body()) }

// recoverStream turns a panic of a streaming handler into an error event
// and [DONE] when the stream started (nothing once [DONE] is out), or a
// 500 otherwise. A panic must not kill a Lambda process nor leave a stream
// without its end.
func (g *Gateway) recoverStream(w http.ResponseWriter, r *http.Request, st *streamer, p any) {
	if p == http.ErrAbortHandler {
		panic(p)
	}
	g.logger(r).ErrorContext(r.Context(), "gateway handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	if st != nil && st.ended {
		return
	}
	if st != nil {
		st.more = false // the panic may have cut an event short
	}
	if st != nil && st.started() {
		st.fail(internalError("An internal error stopped the response."))
		st.done()
		return
	}
	openaierr.Write(w, internalError("Internal server error"))
}

// runToEnd runs a non-streamed request to its end. It answers a failure
// itself (returning nil) and marks the response not to be retried once a
// side-effecting tool ran.
func (g *Gateway) runToEnd(ctx context.Context, w http.ResponseWriter, r *http.Request, req agent.StatelessRequest, emit func(agent.Event)) *agent.StatelessResult {
	res, err := g.runStateless(ctx, r, req, emit)
	if err != nil {
		g.failRun(w, r, err)
		return nil
	}
	if res.Error != "" {
		g.failLate(w, r, res)
		return nil
	}
	if res.SideEffects {
		w.Header().Set(openaierr.HeaderShouldRetry, "false")
	}
	return res
}
