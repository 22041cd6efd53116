package gateway

import (
	"net/http"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/gateway/openaiwire"
)

// chatRequest decodes and validates a ChatRequest and resolves its agent.
func (g *Gateway) chatRequest(w http.ResponseWriter, r *http.Request) (*openaiwire.RunRequest, *agent.Agent, bool) {
	var body openaiwire.ChatRequest
	if err := decode(w, r, &body); err != nil {
		g.fail(w, r, err)
		return nil, nil, false
	}
	rr, err := body.Convert()
	if err != nil {
		g.fail(w, r, err)
		return nil, nil, false
	}
	a, _, err := g.resolve(rr)
	if err != nil {
		g.fail(w, r, err)
		return nil, nil, false
	}
	rr.Req.UserID = userID(r)
	rr.IncludeCost = wantsCost(r)
	keySlots(r, &rr.Req)
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
	var text openaiwire.Steps
	res, err := g.runStateless(ctx, r, rr.Req, func(ev agent.Event) {
		// Tokens that came together leave together.
		st.event(ev.More, func() {
			switch ev.Type {
			case agent.EventContent:
				st.send(openaiwire.Token{Token: text.Text(ev)})
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
	res := g.runToEnd(ctx, w, r, rr.Req, nil)
	if res == nil {
		return
	}
	writeJSON(w, openaiwire.SyncResponse{AgentID: a.ID, Response: res.Content, Usage: rr.UsageOfRun(res)})
}
