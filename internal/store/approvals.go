package store

import (
	"context"
	"encoding/json"
	"time"
)

// MetadataPendingApprovals is the Session.Metadata key of the tool calls of
// a paused turn that wait for the user's decision (a JSON array of
// PendingApproval); absent when none waits.
const MetadataPendingApprovals = "pending_approvals"

// PendingApproval is one tool call waiting for a person's decision.
type PendingApproval struct {
	// ToolCallID is the id of the call in the stored assistant message.
	ToolCallID string `json:"tool_call_id"`
	// ToolName is the tool the model called.
	ToolName string `json:"tool_name"`
	// Arguments are the model's JSON arguments.
	Arguments string `json:"arguments"`
	// Summary is the one-line description shown to the user.
	Summary string `json:"summary"`
	// TurnID is the turn that paused.
	TurnID string `json:"turn_id,omitempty"`
	// RequestedAt is when the turn paused.
	RequestedAt time.Time `json:"requested_at"`
}

// PendingApprovals returns the session's pending approvals, decoded from
// Metadata[MetadataPendingApprovals] (whether it holds the values a store
// decoded from JSON or the slice itself); none when absent or unreadable.
func (s *Session) PendingApprovals() []PendingApproval {
	v, ok := s.Metadata[MetadataPendingApprovals]
	if !ok || v == nil {
		return nil
	}
	if p, ok := v.([]PendingApproval); ok {
		return p
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out []PendingApproval
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// SessionMetadata changes a session's metadata after its creation.
type SessionMetadata interface {
	// UpdateSessionMetadata sets the given keys of the session's metadata
	// (a nil value removes its key), leaving the others as they are, in
	// one atomic change, and returns the session. Values must encode as
	// JSON. MetadataCopilotMode cannot be changed (an error). ErrNotFound
	// when the session does not exist or is another user's. UpdatedAt is
	// not changed (the listing order stays).
	UpdateSessionMetadata(ctx context.Context, k Key, set map[string]any) (*Session, error)
}
