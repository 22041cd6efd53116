package gateway_test

import (
	"bytes"
	"net/http"
	"testing"

	"agentchat/internal/llm/llmtest"
)

// TestToolChoiceNoneNeverPassesToolCalls: with tool_choice "none", a call
// of a client tool that the provider returns anyway never reaches the
// client as tool_calls, streamed or not; the answer ends with
// finish_reason "stop" and whatever text the model wrote.
func TestToolChoiceNoneNeverPassesToolCalls(t *testing.T) {
	e := newEnv(t, envOptions{})
	weather := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	tests := []struct {
		name  string
		reply llmtest.Reply
		text  string
	}{
		{"text and a tool call", llmtest.Reply{Text: "It is sunny.", ToolCalls: []llmtest.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}, "It is sunny."},
		{"a tool call only", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}, ""},
		{"two tool calls, finish stop", llmtest.Reply{FinishReason: "stop", ToolCalls: []llmtest.ToolCall{
			{Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "get_weather", Arguments: `{"city":"Rome"}`}}}, ""},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			name := tt.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				e.llm.Enqueue(tt.reply)
				n := len(e.llm.Requests())
				r := e.post("/v1/chat/completions", map[string]any{"model": "naked", "stream": stream, "tool_choice": "none",
					"tools": []any{weather}, "messages": []any{userMsg("weather in Paris?")}})
				if r.Status != http.StatusOK {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				if reqs := e.llm.Requests(); len(reqs) != n+1 || string(reqs[n].ToolChoice) != `"none"` {
					t.Fatalf("upstream calls %d, tool_choice %s", len(reqs)-n, reqs[len(reqs)-1].ToolChoice)
				}
				if bytes.Contains(r.Body, []byte("tool_calls")) || bytes.Contains(r.Body, []byte("get_weather")) {
					t.Fatalf("the tool call reached the client: %s", r.Body)
				}
				if stream {
					s := parseCompletionStream(t, r.Body)
					if s.errorMsg != "" || s.finish != "stop" || s.content != tt.text {
						t.Fatalf("finish %q content %q error %q: %s", s.finish, s.content, s.errorMsg, r.Body)
					}
					return
				}
				var c struct {
					Choices []struct {
						Message struct {
							Content *string `json:"content"`
						} `json:"message"`
						FinishReason string `json:"finish_reason"`
					} `json:"choices"`
				}
				r.JSON(t, &c)
				if len(c.Choices) != 1 || c.Choices[0].FinishReason != "stop" || c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != tt.text {
					t.Fatalf("answer %s", r.Body)
				}
			})
		}
	}
}
