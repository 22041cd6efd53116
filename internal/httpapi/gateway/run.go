package gateway

import (
	"context"
	"fmt"
	"net/http"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/httpapi/openaierr"
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
// client goes away (locally) or a write to it fails (see newStream).
func (g *Gateway) runContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(r.Context(), g.o.Timeout, errDeadline)
}

// userID is the caller's user id.
func userID(r *http.Request) string {
	id, _ := auth.FromContext(r.Context())
	return id.UserID
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
