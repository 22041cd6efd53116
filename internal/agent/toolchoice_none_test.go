package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

// TestStatelessToolChoiceNoneRunsNoTool: with tool choice "none", a tool
// call that the provider returns anyway is never executed, whether it
// calls an agent tool or a client tool: the calls are dropped (no tool
// event, no client tool call), the step's text is kept, the run ends
// after that one LLM call with finish reason "stop" (or "length"), and
// the drop is logged as a warning.
func TestStatelessToolChoiceNoneRunsNoTool(t *testing.T) {
	addCall := llmtest.ToolCall{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":2}`}
	weatherCall := llmtest.ToolCall{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	unknownCall := llmtest.ToolCall{ID: "call_x", Name: "format_disk", Arguments: `{}`}
	tests := []struct {
		name   string
		choice any
		reply  llmtest.Reply
		// runs is how many times the agent tool must have run.
		runs       int64
		wantText   string
		wantFinish string
		wantCalls  int // client tool calls in the result
		wantWarn   bool
	}{
		{name: "agent tool call only", choice: "none", reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{addCall}},
			wantFinish: "stop", wantWarn: true},
		{name: "text and an agent tool call", choice: "none", reply: llmtest.Reply{Text: "It is 3.", ToolCalls: []llmtest.ToolCall{addCall}},
			wantText: "It is 3.", wantFinish: "stop", wantWarn: true},
		{name: "client tool call", choice: "none", reply: llmtest.Reply{Text: "Sunny.", ToolCalls: []llmtest.ToolCall{weatherCall}},
			wantText: "Sunny.", wantFinish: "stop", wantWarn: true},
		{name: "agent and client calls in parallel", choice: "none", reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{addCall, weatherCall}},
			wantFinish: "stop", wantWarn: true},
		{name: "a tool nobody offers", choice: "none", reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{unknownCall}},
			wantFinish: "stop", wantWarn: true},
		{name: "provider says stop with a call", choice: "none", reply: llmtest.Reply{FinishReason: "stop", ToolCalls: []llmtest.ToolCall{addCall}},
			wantFinish: "stop", wantWarn: true},
		{name: "cut by the length bound", choice: "none", reply: llmtest.Reply{Text: "It is", FinishReason: "length", ToolCalls: []llmtest.ToolCall{addCall}},
			wantText: "It is", wantFinish: "length", wantWarn: true},
		{name: "text only is untouched", choice: "none", reply: llmtest.Reply{Text: "It is 3."},
			wantText: "It is 3.", wantFinish: "stop"},
		// Contrast: without "none" the same reply runs the agent tool or
		// ends with the client's call.
		{name: "auto runs the agent tool", choice: "auto", reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{addCall}},
			runs: 1, wantText: llmtest.DefaultText, wantFinish: "stop"},
		{name: "auto passes the client call", choice: "auto", reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{weatherCall}},
			wantFinish: "tool_calls", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			add := addTool(true)
			run := add.Run
			add.Run = func(ctx context.Context, args json.RawMessage) (string, error) {
				runs.Add(1)
				return run(ctx, args)
			}
			rec := newLogRecorder()
			h := newHarness(t, []Tool{add}, withLogs(rec))
			h.llm.Enqueue(tt.reply) // then the default text reply
			var ev events
			res, err := h.rt.RunStateless(context.Background(), StatelessRequest{
				AgentID: "tester", Messages: userMsgs("add 1 and 2, and the weather in Paris?"),
				ClientTools: []openai.Tool{weatherTool()}, ToolChoice: tt.choice,
			}, ev.add)
			if err != nil {
				t.Fatal(err)
			}
			checkEnd(t, ev, false)
			if got := runs.Load(); got != tt.runs {
				t.Fatalf("the agent tool ran %d times, want %d: %s", got, tt.runs, ev)
			}
			if res.Content != tt.wantText || ev.content() != tt.wantText {
				t.Fatalf("content %q (events %q), want %q", res.Content, ev.content(), tt.wantText)
			}
			if res.FinishReason != tt.wantFinish || len(res.ClientToolCalls) != tt.wantCalls || res.Error != "" {
				t.Fatalf("result = %+v", res)
			}
			if tt.runs == 0 && res.SideEffects {
				t.Fatal("side effects reported while no tool ran")
			}
			if tt.choice == "none" {
				if n := len(h.requests()); n != 1 {
					t.Fatalf("%d LLM calls, want 1 (the dropped call ends the run)", n)
				}
				for _, typ := range []EventType{EventToolCall, EventToolStart, EventToolEnd} {
					if got := ev.ofType(typ); len(got) != 0 {
						t.Fatalf("%s events for a dropped call: %s", typ, ev)
					}
				}
			}
			var warned bool
			for _, r := range rec.records() {
				if r.level == slog.LevelWarn && strings.Contains(r.msg, "tool_choice none") {
					warned = true
				}
			}
			if warned != tt.wantWarn {
				t.Fatalf("drop logged as a warning: %v, want %v (logs %+v)", warned, tt.wantWarn, rec.records())
			}
		})
	}
}
