// Package views holds the JSON views that several handler packages show
// (the time format of every body, the view of a stored message), so that
// no handler package imports another for them.
package views

import (
	"time"

	"agentchat/internal/store"
)

// Timestamp formats t as RFC 3339 in UTC with microseconds and a numeric
// offset, 2026-12-03T06:02:11.123456+00:00: the GNS3 web UI appends "Z" to
// any time that does not end in a numeric offset, so "...Z" would read as
// "...ZZ", an invalid date.
func Timestamp(t time.Time) string {
	return t.UTC().Format(TimestampLayout)
}

// TimestampLayout is the layout of every time in a project-chat,
// LLM-configuration or API-key body.
const TimestampLayout = "2006-01-02T15:04:05.000000-07:00"

// OpenAIMessage is the JSON view of a stored message (a session's
// history, the tool messages of a non-streamed chat answer).
type OpenAIMessage struct {
	ID         string           `json:"id"`
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	CreatedAt  string           `json:"created_at"`
	Name       string           `json:"name,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	ToolCalls  []store.ToolCall `json:"tool_calls,omitempty"`
	Metadata   map[string]any   `json:"metadata,omitempty"`
}
