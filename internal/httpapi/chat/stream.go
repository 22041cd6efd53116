package chat

import (
	"context"
	"encoding/json"
	"net/http"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/runstream"
	"agentchat/internal/sse"
)

// turnEncoder is the project SSE contract of a turn's events, as a
// runstream.Encoder: content events encoded by hand (one per token), the
// others as JSON, each flushed on its own; done is the terminal event.
type turnEncoder struct {
	sessionID string
	contents  *contentEvents
}

func newTurnEncoder(sessionID string) *turnEncoder {
	return &turnEncoder{sessionID: sessionID, contents: newContentEvents(sessionID)}
}

// Event writes the wire event of ev, if the contract carries it.
func (e *turnEncoder) Event(w *runstream.Writer, ev agent.Event) {
	switch ev.Type {
	case agent.EventContent:
		// The event of every token, encoded by hand; queued when the next
		// one is already there (ev.More), flushed with it.
		w.Send(e.contents.encode(ev.Content, ev.MessageID))
		return
	case agent.EventDone:
		w.Finish() // no heartbeat after done
		return
	}
	out, ok := encode(ev, e.sessionID)
	if !ok {
		return // the writer flushes what content events before queued
	}
	// Flushed on its own. A failed write means the client left; the turn
	// notices through the request context and finishes persisting.
	if b := e.marshal(out); b != nil {
		w.SendNow(b)
	}
}

// Heartbeat writes a heartbeat event, without an event id.
func (e *turnEncoder) Heartbeat(s *sse.Stream) { heartbeat(e.sessionID)(s) }

// heartbeat writes the heartbeat event of session sid, without an event
// id: every stream of the chat routes (a turn, a rejoin, a queued
// message) keeps its silences with it.
func heartbeat(sid string) func(*sse.Stream) {
	return func(s *sse.Stream) { _ = s.UnnumberedJSON(event{Type: "heartbeat", SessionID: sid}) }
}

// Failure is the error event of a turn a panic stopped.
func (e *turnEncoder) Failure() []byte {
	return e.marshal(event{Type: "error", Error: "An internal error stopped the response.", SessionID: e.sessionID})
}

// Terminal is the done event.
func (e *turnEncoder) Terminal() [][]byte {
	return [][]byte{e.marshal(event{Type: string(agent.EventDone), SessionID: e.sessionID})}
}

// marshal is the payload of out (nil when it cannot be encoded).
func (e *turnEncoder) marshal(out event) []byte {
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// sse streams the turn's events. onDisconnect is the request's
// on_disconnect ("": the default).
// s is the stream when it is open already (a queued message's), else nil.
func (h *Handlers) sse(w http.ResponseWriter, r *http.Request, turn *agent.Turn, sessionID, onDisconnect string, s *sse.Stream) {
	rw := runstream.New(w, r, newTurnEncoder(sessionID), runstream.Options{
		Stream:    s,
		Heartbeat: h.o.Heartbeat,
		Opened:    func(s *sse.Stream) { _ = s.QueueComment("stream open") },
		PanicLog:  "chat stream panicked",
		Panicked:  func() { _ = turn.Release(context.WithoutCancel(r.Context())) },
	})
	defer rw.Close()
	// The headers and the opening comment leave as soon as the turn's
	// first request to the network (the LLM call) is out, while its answer
	// is awaited, or with the first event, or after OpenWithin: not before
	// the LLM request, whose way out they would delay.
	ctx := r.Context()
	runCtx := rw.FlushBy(ctx, h.o.OpenWithin)
	// Every event but heartbeats carries id: <turn id>:<n>.
	rw.Stream().NumberEvents(turn.ID())
	// The log is started with the request's context, not runCtx: its own
	// requests must not flush the stream.
	if rec := h.record(ctx, rw.Stream(), turn); rec != nil {
		// Closed after the recovery below: its final batch holds the last
		// event, also the one written there.
		defer rec.Close()
		if onDisconnect != onDisconnectCancel {
			// The client may leave: it comes back for the rest.
			runCtx = context.WithoutCancel(runCtx)
		}
	}
	defer rw.Recover()
	turn.Run(runCtx, rw.Event)
}
