package chat_test

import (
	"net/http"
	"testing"

	"agentchat/internal/llm/llmtest"
)

// TestApprovalFieldsAndDecisionsValidated: the approval fields of /stream
// and the body of /approvals are checked before any turn.
func TestApprovalFieldsAndDecisionsValidated(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Text: "hi"}, llmtest.Reply{Text: "Greeting"})
	owned := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hi", "approval": "changes"})
	owned.All(t)
	sid := owned.Header.Get("X-Session-Id")
	approvals := path("/sessions/" + sid + "/approvals")
	yes := true
	tests := []struct {
		name, path string
		user       string
		body       any
		status     int
		message    string
	}{
		{"approval value", path("/stream"), "alice", map[string]any{"message": "x", "approval": "sometimes"}, 422, "Field 'approval' must be one of: off, changes, all"},
		{"approval decision", path("/stream"), "alice", map[string]any{"message": "x", "approval_decision": "approve_all"}, 422, `Field 'approval_decision' must be "reject_all"`},
		{"no decisions", approvals, "alice", map[string]any{"decisions": []any{}}, 422, "Field 'decisions' must list at least one decision"},
		{"no approve", approvals, "alice", map[string]any{"decisions": []any{map[string]any{"tool_call_id": "c"}}}, 422, "decisions[0]: field 'approve' (true or false) is required"},
		{"no id", approvals, "alice", map[string]any{"decisions": []any{map[string]any{"approve": yes}}}, 422, "decisions[0]: field 'tool_call_id' is required"},
		{"bad session", path("/sessions/nope/approvals"), "alice", map[string]any{"decisions": []any{map[string]any{"tool_call_id": "c", "approve": yes}}}, 422, "Invalid session_id: must be a UUID"},
		{"nothing pending", approvals, "alice", map[string]any{"decisions": []any{map[string]any{"tool_call_id": "c", "approve": yes}}}, 409,
			"No tool call of this session awaits a decision (none was asked for, or it was already decided)."},
		{"another user's session", approvals, "bob", map[string]any{"decisions": []any{map[string]any{"tool_call_id": "c", "approve": yes}}}, 404, "Session '" + sid + "' not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.As(tc.user, http.MethodPost, tc.path, tc.body)
			if r.Status != tc.status || r.Message() != tc.message {
				t.Fatalf("got %d %s, want %d %q", r.Status, r.Body, tc.status, tc.message)
			}
		})
	}
}
