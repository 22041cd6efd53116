package gateway

import (
	"net/http"

	"agentchat/internal/agent"
)

// Token is an event of the /v1/chat stream: data: {"token":"..."}.
type Token struct {
	Token string `json:"token"`
}

// SyncResponse is the body answered by POST /v1/chat/sync.
type SyncResponse struct {
	AgentID  string `json:"agent_id"`
	Response string `json:"response"`
	Usage    Usage  `json:"usage"`
}

// chatRequest decodes and validates a ChatRequest and resolves its agent.
func (g *Gateway) chatRequest(w http.ResponseWriter, r *http.Request) (*runRequest, *agent.Agent, bool) {
	var body ChatRequest
	if err := decode(w, r, &body); err != nil {
		g.fail(w, r, err)
		return nil, nil, false
	}
	rr, err := body.validate()
	if err != nil {
		g.fail(w, r, err)
		return nil, nil, false
	}
	a, _, err := g.resolve(rr)
	if err != nil {
		g.fail(w, r, err)
		return nil, nil, false
	}
	rr.req.UserID = userID(r)
	rr.includeCost = wantsCost(r)
	keySlots(r, &rr.req)
	w.Header().Set(HeaderAgentID, a.ID)
	if !g.admit(w, r) {
		return nil, nil, false
	}
	return rr, a, true
}

// chat streams the answer token by token: data: {"token":"..."} per
// content delta, data: {"error":{...}} on a failure after the stream
// started, and data: [DONE] last. SSE comments keep the connection alive.
func (g *Gateway) chat(w http.ResponseWriter, r *http.Request) {
	rr, a, ok := g.chatRequest(w, r)
	if !ok {
		return
	}
	ctx, cancel := g.runContext(r)
	defer cancel()
	st := &streamer{w: w, heartbeat: g.o.Heartbeat, cancel: cancel, noRetry: mayHaveSideEffects(a)}
	defer st.close()
	defer func() {
		if p := recover(); p != nil {
			g.recoverStream(w, r, st, p)
		}
	}()
	var text steps
	res, err := g.runStateless(ctx, r, rr.req, func(ev agent.Event) {
		// Tokens that came together leave together.
		st.event(ev.More, func() {
			switch ev.Type {
			case agent.EventContent:
				st.send(Token{Token: text.text(ev)})
			case agent.EventError:
				// Sent once the run returned, mapped from res.Err as the
				// same failure before the stream would be.
			default:
				st.start()
			}
		})
	})
	switch {
	case err != nil && !st.started():
		g.failRun(w, r, err)
		return
	case err != nil:
		g.logger(r).ErrorContext(r.Context(), "stateless run failed after events", "err", err)
		g.failStream(r, st, err, "The response failed.")
	case res.Error != "":
		g.failStream(r, st, res.Err, res.Error)
	}
	st.done()
}

// chatSync runs the agent and answers the whole response at once.
func (g *Gateway) chatSync(w http.ResponseWriter, r *http.Request) {
	rr, a, ok := g.chatRequest(w, r)
	if !ok {
		return
	}
	ctx, cancel := g.runContext(r)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			g.recoverStream(w, r, nil, p)
		}
	}()
	res := g.runToEnd(ctx, w, r, rr.req, nil)
	if res == nil {
		return
	}
	writeJSON(w, SyncResponse{AgentID: a.ID, Response: res.Content, Usage: rr.usageOfRun(res)})
}
