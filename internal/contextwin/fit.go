package contextwin

import (
	openai "github.com/sashabaranov/go-openai"
)

// Required returns the tokens that Fit always counts: the system prompt (as a
// system message; nothing if empty), the tool schemas, the messages of the
// running turn and ReplyPriming.
func (c *Counter) Required(system string, tools []openai.Tool, current []openai.ChatCompletionMessage) int {
	n := ReplyPriming + c.Tools(tools)
	if system != "" {
		n += c.Message(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	}
	for i := range current {
		n += c.Message(current[i])
	}
	return n
}

// Fit keeps what fits: system (may be empty) and tools always count; current
// (the messages of the running turn: the user message and, later in the turn,
// the assistant/tool messages of earlier steps) is always kept; from history
// (older turns, oldest first) the oldest turns are dropped first, a turn being
// a user message with the assistant and tool messages after it, so a tool
// message never loses the assistant message that called it (if history starts
// with non-user messages, they form the oldest group).
//
// It returns the kept history (a suffix of whole turns, sharing history's
// backing array), the total tokens counted (including ReplyPriming), and a
// *TooLargeError wrapping ErrTooLarge, with total = Need, when system + tools
// + current alone exceed budget. Turns are dropped oldest first only: a
// smaller older turn is not kept in place of a newer one that does not fit.
func (c *Counter) Fit(budget int, system string, tools []openai.Tool, history, current []openai.ChatCompletionMessage) (kept []openai.ChatCompletionMessage, total int, err error) {
	total = c.Required(system, tools, current)
	if total > budget {
		return nil, total, &TooLargeError{Need: total, Budget: budget}
	}
	start := len(history)
	group := 0
	for i := len(history) - 1; i >= 0; i-- {
		group += c.Message(history[i])
		if history[i].Role != openai.ChatMessageRoleUser && i > 0 {
			continue // not yet at the start of the turn
		}
		if total+group > budget {
			break
		}
		total += group
		start = i
		group = 0
	}
	return history[start:], total, nil
}

// FitWindow computes the budget with Budget(contextLimitK, strategy,
// maxTokens) and calls Fit; a *TooLargeError it returns also carries the
// window's settings, so its message names them.
func (c *Counter) FitWindow(contextLimitK int, strategy string, maxTokens int, system string, tools []openai.Tool, history, current []openai.ChatCompletionMessage) (kept []openai.ChatCompletionMessage, total int, err error) {
	kept, total, err = c.Fit(Budget(contextLimitK, strategy, maxTokens), system, tools, history, current)
	if tl, ok := err.(*TooLargeError); ok {
		tl.ContextLimitK = contextLimitK
		tl.Strategy = EffectiveStrategy(strategy)
		tl.MaxTokens = max(maxTokens, 0)
	}
	return kept, total, err
}
