package chat

import (
	"agentchat/internal/agent"
	"agentchat/internal/jsonstr"
)

// contentEvents encodes the content events of one stream without
// reflection (one per streamed token): the bytes encoding/json gives for
// the event that encode returns. The buffer is reused from one event to
// the next.
type contentEvents struct {
	suffix []byte // ,"session_id":"..."}
	buf    []byte
}

func newContentEvents(sessionID string) *contentEvents {
	c := &contentEvents{}
	c.suffix = append(c.suffix, `,"session_id":`...)
	c.suffix = jsonstr.Append(c.suffix, sessionID)
	c.suffix = append(c.suffix, '}')
	return c
}

// encode returns the event of a content delta (valid until the next call).
func (c *contentEvents) encode(content, messageID string) []byte {
	b := append(c.buf[:0], `{"type":"content","content":`...)
	b = jsonstr.Append(b, content)
	if messageID != "" {
		b = append(b, `,"message_id":`...)
		b = jsonstr.Append(b, messageID)
	}
	b = append(b, c.suffix...)
	c.buf = b
	return b
}

// event is the project SSE wire form of an agent event.
type event struct {
	Type       string    `json:"type"`
	Content    *string   `json:"content,omitempty"`
	MessageID  string    `json:"message_id,omitempty"`
	ToolCall   *toolCall `json:"tool_call,omitempty"`
	ToolName   string    `json:"tool_name,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	ToolOutput *string   `json:"tool_output,omitempty"`
	Error      string    `json:"error,omitempty"`
	// Arguments and Summary: approval_required; SnapshotID and Name:
	// snapshot.
	Arguments  *string `json:"arguments,omitempty"`
	Summary    string  `json:"summary,omitempty"`
	SnapshotID string  `json:"snapshot_id,omitempty"`
	Name       string  `json:"name,omitempty"`
	SessionID  string  `json:"session_id"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Complete  bool   `json:"complete,omitempty"`
}

// encode returns the wire event of ev, or false for events the project SSE
// contract does not carry.
func encode(ev agent.Event, sessionID string) (event, bool) {
	out := event{Type: string(ev.Type), SessionID: sessionID}
	switch ev.Type {
	case agent.EventContent:
		c := ev.Content
		out.Content, out.MessageID = &c, ev.MessageID
	case agent.EventToolCall:
		tc := ev.ToolCall
		if tc == nil {
			return out, false
		}
		out.ToolCall = &toolCall{ID: tc.ID, Type: "function", Function: toolFunction{Name: tc.Name, Arguments: tc.Arguments, Complete: tc.Complete}}
	case agent.EventToolStart:
		out.ToolName, out.ToolCallID = ev.ToolName, ev.ToolCallID
	case agent.EventToolEnd:
		o := ev.ToolOutput
		out.ToolName, out.ToolCallID, out.ToolOutput = ev.ToolName, ev.ToolCallID, &o
	case agent.EventError:
		out.Error = ev.Error
	case agent.EventApprovalRequired:
		if ev.Approval == nil {
			return out, false
		}
		a := ev.Approval.Arguments
		out.ToolName, out.ToolCallID, out.Arguments, out.Summary = ev.ToolName, ev.ToolCallID, &a, ev.Approval.Summary
	case agent.EventSnapshot:
		if ev.Snapshot == nil {
			return out, false
		}
		out.SnapshotID, out.Name, out.Error = ev.Snapshot.ID, ev.Snapshot.Name, ev.Snapshot.Error
	case agent.EventDone:
	default:
		return out, false
	}
	return out, true
}
