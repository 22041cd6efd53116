package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/seerr"
)

// TestToolChoiceNoneRunsNoAgentTool: with tool_choice "none", a call of
// one of the agent's own tools that the provider returns anyway is not
// run either (the agent's tools run server-side, so dropping client calls
// alone is not enough): the answer keeps the model's text, shows no tool
// activity, ends with finish_reason "stop" after the one LLM call, and is
// not marked as having side effects.
func TestToolChoiceNoneRunsNoAgentTool(t *testing.T) {
	var runs atomic.Int64
	e := newEnv(t, envOptions{registry: func(*seerr.Client) *agent.Registry {
		reg := agent.NewRegistry("operator")
		reg.Register(&agent.Agent{ID: "operator", SystemPrompt: "You operate the lab.", Skills: []agent.Skill{{Name: "lab", Tools: []agent.Tool{{
			Name: "reboot_router", Description: "Reboots the router.", SideEffects: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
			Run: func(context.Context, json.RawMessage) (string, error) {
				runs.Add(1)
				return "rebooted", nil
			},
		}}}}})
		return reg
	}})
	reboot := llmtest.ToolCall{Name: "reboot_router", Arguments: `{}`}
	tests := []struct {
		name  string
		reply llmtest.Reply
		text  string
	}{
		{"a tool call only", llmtest.Reply{ToolCalls: []llmtest.ToolCall{reboot}}, ""},
		{"text and a tool call", llmtest.Reply{Text: "I will not reboot it.", ToolCalls: []llmtest.ToolCall{reboot}}, "I will not reboot it."},
		{"two calls, finish stop", llmtest.Reply{FinishReason: "stop", ToolCalls: []llmtest.ToolCall{reboot, reboot}}, ""},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			name := tt.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				e.llm.Enqueue(tt.reply) // a second call would get the default text
				n, before := len(e.llm.Requests()), runs.Load()
				r := e.post("/v1/chat/completions", map[string]any{"model": "operator", "stream": stream, "tool_choice": "none",
					"messages": []any{userMsg("reboot the router")}})
				if r.Status != http.StatusOK {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				if got := runs.Load() - before; got != 0 {
					t.Fatalf("the agent tool ran %d times despite tool_choice none", got)
				}
				if got := len(e.llm.Requests()) - n; got != 1 {
					t.Fatalf("%d upstream calls, want 1 (the dropped call ends the answer)", got)
				}
				if bytes.Contains(r.Body, []byte("reboot_router")) || bytes.Contains(r.Body, []byte("rebooted")) {
					t.Fatalf("the dropped call shows in the answer: %s", r.Body)
				}
				if !stream && r.Header.Get("x-should-retry") == "false" {
					t.Fatalf("answer marked as having side effects: %v", r.Header)
				}
				if stream {
					s := parseCompletionStream(t, r.Body)
					if s.errorMsg != "" || s.finish != "stop" || s.content != tt.text || s.reasoning != "" {
						t.Fatalf("finish %q content %q reasoning %q error %q: %s", s.finish, s.content, s.reasoning, s.errorMsg, r.Body)
					}
					return
				}
				var c struct {
					Choices []struct {
						Message struct {
							Content          *string `json:"content"`
							ReasoningContent string  `json:"reasoning_content"`
						} `json:"message"`
						FinishReason string `json:"finish_reason"`
					} `json:"choices"`
				}
				r.JSON(t, &c)
				if len(c.Choices) != 1 || c.Choices[0].FinishReason != "stop" || c.Choices[0].Message.Content == nil ||
					*c.Choices[0].Message.Content != tt.text || c.Choices[0].Message.ReasoningContent != "" {
					t.Fatalf("answer %s", r.Body)
				}
			})
		}
	}
}
