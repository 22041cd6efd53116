package sessions

import (
	"agentchat/internal/httpapi/views"
	"agentchat/internal/pricing"
	"agentchat/internal/store"
)

// ChatSession is the JSON view of a session.
type ChatSession struct {
	ThreadID      string         `json:"thread_id"`
	UserID        string         `json:"user_id"`
	ProjectID     string         `json:"project_id"`
	Title         string         `json:"title"`
	MessageCount  int64          `json:"message_count"`
	LLMCallsCount int64          `json:"llm_calls_count"`
	InputTokens   int64          `json:"input_tokens"`
	OutputTokens  int64          `json:"output_tokens"`
	TotalTokens   int64          `json:"total_tokens"`
	LastMessageAt *string        `json:"last_message_at"`
	CreatedAt     string         `json:"created_at"`
	UpdatedAt     string         `json:"updated_at"`
	Metadata      map[string]any `json:"metadata"`
	Stats         SessionStats   `json:"stats"`
	Pinned        bool           `json:"pinned"`
}

// SessionStats is the JSON view of a session's statistics.
type SessionStats struct {
	ToolCalls    map[string]int64 `json:"tool_calls"`
	Errors       int64            `json:"errors"`
	AbortedTurns int64            `json:"aborted_turns"`
	Turns        int64            `json:"turns"`
	// CostUSD is what the session's priced LLM calls cost; null when its
	// calls were all of a model without prices (unknown, not free).
	CostUSD *float64 `json:"cost_usd"`
	// UnpricedLLMCalls counts the calls whose cost is unknown (not in
	// CostUSD).
	UnpricedLLMCalls int64 `json:"unpriced_llm_calls"`
}

// ConversationHistory is the JSON view of a session's last messages.
type ConversationHistory struct {
	ThreadID  string                `json:"thread_id"`
	Title     string                `json:"title"`
	Messages  []views.OpenAIMessage `json:"messages"`
	CreatedAt string                `json:"created_at"`
	UpdatedAt string                `json:"updated_at"`
	LLMCalls  int64                 `json:"llm_calls"`
}

// SessionView converts a stored session to its JSON view.
func SessionView(s *store.Session) ChatSession {
	v := ChatSession{
		ThreadID:      s.ThreadID,
		UserID:        s.UserID,
		ProjectID:     s.ProjectID,
		Title:         s.Title,
		MessageCount:  s.MessageCount,
		LLMCallsCount: s.LLMCallsCount,
		InputTokens:   s.InputTokens,
		OutputTokens:  s.OutputTokens,
		TotalTokens:   s.TotalTokens,
		CreatedAt:     views.Timestamp(s.CreatedAt),
		UpdatedAt:     views.Timestamp(s.UpdatedAt),
		Metadata:      s.Metadata,
		Stats: SessionStats{
			ToolCalls:    s.Stats.ToolCalls,
			Errors:       s.Stats.Errors,
			AbortedTurns: s.Stats.AbortedTurns,
			Turns:        s.Stats.Turns,
			CostUSD:      pricing.ReportedUSD(s.Stats.CostNanos, s.Stats.UnpricedCalls),

			UnpricedLLMCalls: s.Stats.UnpricedCalls,
		},
		Pinned: s.Pinned,
	}
	if !s.LastMessageAt.IsZero() {
		ts := views.Timestamp(s.LastMessageAt)
		v.LastMessageAt = &ts
	}
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	if v.Stats.ToolCalls == nil {
		v.Stats.ToolCalls = map[string]int64{}
	}
	return v
}

// MessageView converts a stored message to its JSON view.
func MessageView(m *store.Message) views.OpenAIMessage {
	return views.OpenAIMessage{
		ID:         m.ID,
		Role:       m.Role,
		Content:    m.Content,
		CreatedAt:  views.Timestamp(m.CreatedAt),
		Name:       m.Name,
		ToolCallID: m.ToolCallID,
		ToolCalls:  m.ToolCalls,
		Metadata:   m.Metadata,
	}
}
