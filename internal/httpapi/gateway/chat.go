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
	enc := &tokenStream{openaiStream: openaiStream{cancel: cancel}}
	rw := g.newStream(w, r, a, enc, cancel, nil)
	defer rw.Close()
	defer rw.Recover()
	// Tokens that came together leave together (runstream.Writer.Event).
	res, err := g.runStateless(ctx, r, rr.Req, rw.Event)
	switch {
	case err != nil && !rw.Opened():
		g.failRun(w, r, err)
		return
	case err != nil:
		g.logger(r).ErrorContext(r.Context(), "stateless run failed after events", "err", err)
		g.failStream(r, rw, &enc.openaiStream, err, "The response failed.")
	case res.Error != "":
		g.failStream(r, rw, &enc.openaiStream, res.Err, res.Error)
	}
	rw.Finish()
}

// chatSync runs the agent and answers the whole response at once.
func (g *Gateway) chatSync(w http.ResponseWriter, r *http.Request) {
	rr, a, ok := g.chatRequest(w, r)
	if !ok {
		return
	}
	ctx, cancel := g.runContext(r)
	defer cancel()
	defer g.recoverSync(w, r)
	res := g.runToEnd(ctx, w, r, rr.Req, nil)
	if res == nil {
		return
	}
	writeJSON(w, openaiwire.SyncResponse{AgentID: a.ID, Response: res.Content, Usage: rr.UsageOfRun(res)})
}
