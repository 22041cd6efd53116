package agent

import "agentchat/internal/llm"

// EventType names a runtime event.
type EventType string

// Event types, in the vocabulary of the project SSE contract.
const (
	EventContent   EventType = "content"
	EventReasoning EventType = "reasoning"
	EventToolCall  EventType = "tool_call"
	EventToolStart EventType = "tool_start"
	EventToolEnd   EventType = "tool_end"
	EventError     EventType = "error"
	EventDone      EventType = "done"
	// EventApprovalRequired: a tool call waits for a person's decision
	// (ToolCallID, ToolName, Approval); the turn then ends.
	EventApprovalRequired EventType = "approval_required"
	// EventSnapshot: a GNS3 snapshot was taken before the first lab
	// change of the turn, or could not be (Snapshot).
	EventSnapshot EventType = "snapshot"
)

// ToolCallEvent is the progress of one tool call requested by the model.
type ToolCallEvent struct {
	ID   string
	Name string
	// Arguments is cumulative.
	Arguments string
	Complete  bool
	// Index is the call's position in the assistant message.
	Index int
	// Client is true for a tool declared by the client (OpenAI surface):
	// the client runs it, so it is passed through as a real tool call.
	Client bool
}

// Event is one thing that happened during a turn. Surfaces encode events
// into their own wire formats (project SSE, token SSE, OpenAI chunks).
type Event struct {
	Type EventType
	// Content is the text delta of EventContent and EventReasoning.
	Content string
	// MessageID is the id of the assistant message the content belongs to.
	MessageID string
	// ToolCall is set on EventToolCall.
	ToolCall *ToolCallEvent
	// ToolName, ToolCallID and ToolOutput are set on tool start/end.
	ToolName   string
	ToolCallID string
	ToolOutput string
	// Error is a human-readable message without secrets, on EventError.
	Error string
	// Approval is set on EventApprovalRequired, Snapshot on EventSnapshot.
	Approval *ApprovalEvent
	Snapshot *SnapshotEvent
	// LogProbs are the log probabilities of Content's tokens on
	// EventContent, when the request asked for them (llm.Options.LogProbs).
	LogProbs []llm.TokenLogProb
	// More is true when another event follows at once, without waiting for
	// the LLM or anything else (both came from data the LLM sent in one
	// go; see llm.Delta.More). A surface may write this event without
	// flushing it, so that both leave in one write; it flushes at the next
	// event without More, whether it writes that event or not.
	More bool
}
