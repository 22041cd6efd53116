package agent

import (
	"encoding/json"
	"strings"
	"time"

	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// interruptedToolOutput is the tool message that repairs a tool call whose
// result was never stored (the turn crashed while the tool ran).
const interruptedToolOutput = "Error: this tool call was interrupted before it returned a result."

// emptyParameters is the schema given for a tool without parameters.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// systemPrompt joins the agent prompt, its skills' prompts and the turn's
// extra prompt, skipping empty parts.
func systemPrompt(base string, skills []Skill, extra string) string {
	parts := make([]string, 0, len(skills)+2)
	if s := strings.TrimSpace(base); s != "" {
		parts = append(parts, s)
	}
	for _, sk := range skills {
		if s := strings.TrimSpace(sk.Prompt); s != "" {
			parts = append(parts, s)
		}
	}
	if s := strings.TrimSpace(extra); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n\n")
}

// llmTools converts tools to their OpenAI declarations.
func llmTools(tools []Tool) []openai.Tool {
	out := make([]openai.Tool, 0, len(tools))
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = emptyParameters
		}
		out = append(out, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return out
}

// toLLMCalls converts stored tool calls to the OpenAI shape.
func toLLMCalls(calls []store.ToolCall) []openai.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = openai.ToolCall{
			ID:       c.ID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Function.Name, Arguments: c.Function.Arguments},
		}
	}
	return out
}

// toStoreCalls converts the model's tool calls to the stored shape.
func toStoreCalls(calls []openai.ToolCall) []store.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]store.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = store.ToolCall{
			ID:       c.ID,
			Type:     string(openai.ToolTypeFunction),
			Function: store.FunctionCall{Name: c.Function.Name, Arguments: c.Function.Arguments},
		}
	}
	return out
}

// buildHistory turns stored messages into the prompt history. Every
// assistant message with tool calls is followed by exactly one result per
// call: a stored tool message is matched to the nearest preceding assistant
// message that made that call (ids may repeat across steps with some
// servers; a second result of one call is dropped); a call without a result gets a repair message, returned in
// repairs so the caller persists it. Stored system messages, tool messages
// that answer no call and empty assistant messages are left out.
func buildHistory(msgs []store.Message, newID func() string, now time.Time) (history []openai.ChatCompletionMessage, repairs []store.Message) {
	// results[i][j] is the index in msgs of the result of call j of the
	// assistant message msgs[i].
	results := map[int][]int{}
	for j, m := range msgs {
		if m.Role != store.RoleTool || m.ToolCallID == "" {
			continue
		}
	search:
		for i := j - 1; i >= 0; i-- {
			a := msgs[i]
			if a.Role != store.RoleAssistant || len(a.ToolCalls) == 0 {
				continue
			}
			for k, c := range a.ToolCalls {
				if c.ID != m.ToolCallID {
					continue
				}
				r := results[i]
				if r == nil {
					r = make([]int, len(a.ToolCalls))
					for x := range r {
						r[x] = -1
					}
					results[i] = r
				}
				if r[k] < 0 {
					r[k] = j
				}
				break search // a second result of the same call is dropped
			}
		}
	}

	history = make([]openai.ChatCompletionMessage, 0, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case store.RoleUser:
			history = append(history, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.Content})
		case store.RoleAssistant:
			if len(m.ToolCalls) == 0 {
				if m.Content != "" {
					history = append(history, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Content})
				}
				continue
			}
			history = append(history, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleAssistant, Content: m.Content, ToolCalls: toLLMCalls(m.ToolCalls),
			})
			r := results[i]
			for k, c := range m.ToolCalls {
				if r != nil && r[k] >= 0 {
					history = append(history, openai.ChatCompletionMessage{
						Role: openai.ChatMessageRoleTool, Content: msgs[r[k]].Content, ToolCallID: c.ID,
					})
					continue
				}
				repairs = append(repairs, store.Message{
					ID: newID(), Role: store.RoleTool, Content: interruptedToolOutput,
					Name: c.Function.Name, ToolCallID: c.ID, CreatedAt: now,
					Metadata: map[string]any{"error": true, "repaired": true},
				})
				history = append(history, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, Content: interruptedToolOutput, ToolCallID: c.ID,
				})
			}
		}
	}
	return history, repairs
}
