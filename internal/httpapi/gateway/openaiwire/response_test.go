package openaiwire

import (
	"encoding/json"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/llm"

	openai "github.com/sashabaranov/go-openai"
)

// TestClientCallsNone: with tool_choice "none" a run's client tool calls
// are dropped and a tool_calls finish becomes stop; otherwise both pass.
func TestClientCallsNone(t *testing.T) {
	res := &agent.StatelessResult{ClientToolCalls: []openai.ToolCall{{ID: "c1"}}, FinishReason: "tool_calls"}
	calls, finish, dropped := (&RunRequest{}).ClientCalls(res)
	if len(calls) != 1 || finish != "tool_calls" || dropped {
		t.Errorf("auto: %v %q %v", calls, finish, dropped)
	}
	off := &RunRequest{Req: agent.StatelessRequest{ToolChoice: "none"}}
	calls, finish, dropped = off.ClientCalls(res)
	if calls != nil || finish != "stop" || !dropped {
		t.Errorf("none: %v %q %v", calls, finish, dropped)
	}
	calls, finish, dropped = off.ClientCalls(&agent.StatelessResult{FinishReason: "length"})
	if calls != nil || finish != "length" || dropped {
		t.Errorf("none, no calls: %v %q %v", calls, finish, dropped)
	}
}

// TestUsageOfRun: the total defaults to prompt plus completion, and the
// cost is null when asked for and unknown, absent when not asked for.
func TestUsageOfRun(t *testing.T) {
	res := &agent.StatelessResult{Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 4}, UnpricedCalls: 1}
	b, _ := json.Marshal((&RunRequest{}).UsageOfRun(res))
	if want := `{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, _ = json.Marshal((&RunRequest{IncludeCost: true}).UsageOfRun(res))
	if want := `{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"cost_usd":null}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestAnswerOf: content is null only for an answer of tool calls alone.
func TestAnswerOf(t *testing.T) {
	calls := []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "f", Arguments: "{}"}}}
	b, _ := json.Marshal(AnswerOf("", "", calls))
	want := `{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	if b, _ = json.Marshal(AnswerOf("", "", nil)); string(b) != `{"role":"assistant","content":"","refusal":null}` {
		t.Errorf("empty answer: %s", b)
	}
}
