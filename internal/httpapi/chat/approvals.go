package chat

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// PathApprovals is the path of the route that decides a paused turn's
// tool calls.
const PathApprovals = "/v3/projects/{project_id}/chat/sessions/{session_id}/approvals"

// Bounds of an approvals body.
const (
	maxDecisions      = 100
	maxToolCallIDLen  = 200
	maxDecisionNoteLn = 2000
)

// ApprovalsRequest is the body of POST .../approvals.
type ApprovalsRequest struct {
	Decisions []DecisionRequest `json:"decisions"`
}

// DecisionRequest is one decision: approve (required) the call
// tool_call_id or decline it, with an optional note for the model.
type DecisionRequest struct {
	ToolCallID string `json:"tool_call_id"`
	Approve    *bool  `json:"approve"`
	Note       string `json:"note"`
}

// validate checks the body and returns the decisions.
func (req *ApprovalsRequest) validate() ([]agent.Decision, error) {
	if len(req.Decisions) == 0 {
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'decisions' must list at least one decision")
	}
	if len(req.Decisions) > maxDecisions {
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'decisions' must list at most %d decisions", maxDecisions)
	}
	out := make([]agent.Decision, len(req.Decisions))
	for i, d := range req.Decisions {
		switch {
		case strings.TrimSpace(d.ToolCallID) == "":
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "decisions[%d]: field 'tool_call_id' is required", i)
		case len(d.ToolCallID) > maxToolCallIDLen || !utf8.ValidString(d.ToolCallID):
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "decisions[%d]: field 'tool_call_id' is not a tool call id", i)
		case d.Approve == nil:
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "decisions[%d]: field 'approve' (true or false) is required", i)
		case len(d.Note) > maxDecisionNoteLn:
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "decisions[%d]: field 'note' must be at most %d bytes", i, maxDecisionNoteLn)
		case !utf8.ValidString(d.Note):
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "decisions[%d]: field 'note' must be valid UTF-8", i)
		}
		out[i] = agent.Decision{ToolCallID: d.ToolCallID, Approve: *d.Approve, Note: oneLine(d.Note)}
	}
	return out, nil
}

// oneLine replaces control characters of a note with spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// approvals decides the pending calls of a paused turn and streams the
// turn that goes on, as /stream does.
func (h *Handlers) approvals(w http.ResponseWriter, r *http.Request) error {
	sid := r.PathValue("session_id")
	if err := httpapi.ValidateUUID("session_id", sid); err != nil {
		return err
	}
	sid = httpapi.NormalizeUUID(sid)
	var body ApprovalsRequest
	if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{}); err != nil {
		return err
	}
	decisions, err := body.validate()
	if err != nil {
		return err
	}
	if h.o.Runtime == nil {
		return errors.New("chat runtime is not configured")
	}
	id, _ := auth.FromContext(r.Context())
	tr := agent.TurnRequest{
		Key:       store.Key{ProjectID: r.PathValue("project_id"), UserID: id.UserID, ThreadID: sid},
		AgentID:   h.o.AgentID,
		Decisions: decisions,
		KeyID:     id.KeyID,
		KeyBudget: id.KeyLimits.Budget,
	}
	if id.KeyID != "" && id.KeyLimits.MaxParallel > 0 {
		tr.SlotPool, tr.MaxTurns = agent.KeySlotPool(id.KeyID), id.KeyLimits.MaxParallel
	}
	turn, err := h.o.Runtime.StartTurn(r.Context(), tr)
	if err != nil {
		return startError(sid, err)
	}
	w.Header().Set("X-Session-Id", sid)
	h.sse(w, r, turn, sid, "", nil)
	return nil
}
