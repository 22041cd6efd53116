package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

func userMsgs(texts ...string) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(texts))
	for i, s := range texts {
		out[i] = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: s}
	}
	return out
}

func weatherTool() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "get_weather", Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	}}
}

func TestStatelessAgentToolRunsServerSide(t *testing.T) {
	h := newHarness(t, []Tool{addTool(true)})
	h.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "add", Arguments: `{"a":2,"b":3}`}},
			Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 5}},
		llmtest.Reply{Text: "The sum is 5.", Usage: &llmtest.Usage{PromptTokens: 20, CompletionTokens: 4}},
	)
	var ev events
	temp := float32(0.5)
	res, err := h.rt.RunStateless(context.Background(), StatelessRequest{
		AgentID: "tester", Messages: userMsgs("add 2 and 3"), UserID: "u", Temperature: &temp,
		MaxTokens: 100, Stop: []string{"END"}, ClientTools: []openai.Tool{weatherTool()},
	}, ev.add)
	if err != nil {
		t.Fatal(err)
	}
	checkEnd(t, ev, false)
	want := StatelessResult{AgentID: "tester", Content: "The sum is 5.", FinishReason: "stop", SideEffects: true,
		Usage: llm.Usage{PromptTokens: 30, CompletionTokens: 9, TotalTokens: 39}, Model: "test-model"}
	if res.AgentID != want.AgentID || res.Content != want.Content || res.FinishReason != want.FinishReason ||
		res.SideEffects != want.SideEffects || res.Usage != want.Usage || res.Model != want.Model ||
		len(res.ClientToolCalls) != 0 || res.Error != "" {
		t.Fatalf("result = %+v\nwant %+v", res, want)
	}
	if end := ev.ofType(EventToolEnd); len(end) != 1 || end[0].ToolOutput != "5" {
		t.Fatalf("tool events = %s", ev)
	}
	for _, e := range ev.ofType(EventToolCall) {
		if e.ToolCall.Client {
			t.Fatalf("agent tool reported as client tool: %s", ev)
		}
	}
	reqs := h.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d (nothing stored, no title call)", len(reqs))
	}
	r := reqs[0]
	if got := roles(r.Messages); len(got) != 2 || got[0] != "system:You are a test agent.\n\nUse the test tools." || got[1] != "user:add 2 and 3" {
		t.Fatalf("prompt = %q", got)
	}
	if len(r.Tools) != 2 || r.Tools[0].Function.Name != "add" || r.Tools[1].Function.Name != "get_weather" {
		t.Fatalf("tools = %+v", r.Tools)
	}
	if r.Temperature == nil || *r.Temperature != 0.5 || r.MaxTokens != 100 || len(r.Stop) != 1 || r.Stop[0] != "END" {
		t.Fatalf("parameters not passed: temp=%v max=%d stop=%v", r.Temperature, r.MaxTokens, r.Stop)
	}
	if got := roles(reqs[1].Messages); len(got) != 4 || got[3] != "tool:5#call_1" {
		t.Fatalf("second prompt = %q", got)
	}
}

func TestStatelessClientToolPassthrough(t *testing.T) {
	h := newHarness(t, []Tool{addTool(false)})
	h.llm.Enqueue(llmtest.Reply{Text: "Checking.", ToolCalls: []llmtest.ToolCall{
		{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":1}`},
	}})
	var ev events
	res, err := h.rt.RunStateless(context.Background(), StatelessRequest{
		AgentID: "tester", Messages: userMsgs("weather in Paris?"), ClientTools: []openai.Tool{weatherTool()},
	}, ev.add)
	if err != nil {
		t.Fatal(err)
	}
	checkEnd(t, ev, false)
	if res.FinishReason != "tool_calls" || len(res.ClientToolCalls) != 1 || res.Content != "Checking." {
		t.Fatalf("result = %+v", res)
	}
	c := res.ClientToolCalls[0]
	if c.ID != "call_w" || c.Type != openai.ToolTypeFunction || c.Function.Name != "get_weather" || c.Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("client call = %+v", c)
	}
	if n := len(ev.ofType(EventToolStart)); n != 0 {
		t.Fatalf("a tool ran server-side: %s", ev)
	}
	for _, e := range ev.ofType(EventToolCall) {
		if wantClient := e.ToolCall.ID == "call_w"; e.ToolCall.Client != wantClient {
			t.Fatalf("tool_call %s Client=%v: %s", e.ToolCall.ID, e.ToolCall.Client, ev)
		}
	}
	if n := len(h.requests()); n != 1 {
		t.Fatalf("requests = %d, want 1", n)
	}
}

func TestStatelessSystemOnly(t *testing.T) {
	h := newHarness(t, nil)
	h.llm.Enqueue(llmtest.Reply{Text: "Greeting"})
	var ev events
	res, err := h.rt.RunStateless(context.Background(), StatelessRequest{
		AgentID: "gpt-3.5-turbo", MaxTokens: 16,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: "Write a title for: hello"}},
	}, ev.add)
	if err != nil {
		t.Fatal(err)
	}
	checkEnd(t, ev, false)
	if res.AgentID != "naked" || res.Content != "Greeting" {
		t.Fatalf("result = %+v", res)
	}
	if got := roles(h.requests()[0].Messages); len(got) != 1 || got[0] != "user:Write a title for: hello" {
		t.Fatalf("prompt = %q", got)
	}
}

func TestStatelessErrors(t *testing.T) {
	t.Run("before the first token", func(t *testing.T) {
		h := newHarness(t, nil)
		h.llm.Enqueue(llmtest.Reply{Status: 401})
		var ev events
		res, err := h.rt.RunStateless(context.Background(), StatelessRequest{Messages: userMsgs("hi")}, ev.add)
		var le *llm.Error
		if res != nil || !errors.As(err, &le) || le.Status != 401 || len(ev) != 0 {
			t.Fatalf("res = %+v, err = %v, events = %s", res, err, ev)
		}
		if msg := llm.UserMessage(err); strings.Contains(msg, testAPIKey) || !strings.Contains(msg, "API key") {
			t.Fatalf("user message = %q", msg)
		}
	})
	t.Run("after streaming began", func(t *testing.T) {
		h := newHarness(t, nil)
		h.llm.Enqueue(llmtest.Reply{Text: "one two three", HangUp: true, HangUpAfter: 2})
		var ev events
		res, err := h.rt.RunStateless(context.Background(), StatelessRequest{Messages: userMsgs("hi")}, ev.add)
		if err != nil {
			t.Fatal(err)
		}
		msg := checkEnd(t, ev, true)
		if res.Error != msg || ev.content() != "one" || res.Err == nil {
			t.Fatalf("result = %+v, events = %s", res, ev)
		}
	})
	t.Run("after a tool step", func(t *testing.T) {
		h := newHarness(t, []Tool{addTool(false)})
		h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":1,"b":1}`}}},
			llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}}})
		var ev events
		res, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("hi")}, ev.add)
		if err != nil {
			t.Fatal(err)
		}
		msg := checkEnd(t, ev, true)
		var le *llm.Error
		if res.Error != msg || !errors.As(res.Err, &le) || le.Kind != llm.KindRateLimit || le.RetryAfter != 7*time.Second || res.SideEffects {
			t.Fatalf("result = %+v (err %v)", res, res.Err)
		}
	})
	t.Run("not configured", func(t *testing.T) {
		h := newHarness(t, nil)
		h.res.set(nil)
		if _, err := h.rt.RunStateless(context.Background(), StatelessRequest{Messages: userMsgs("hi")}, nil); !errors.Is(err, llm.ErrNotConfigured) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no messages", func(t *testing.T) {
		h := newHarness(t, nil)
		if _, err := h.rt.RunStateless(context.Background(), StatelessRequest{}, nil); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("max steps", func(t *testing.T) {
		h := newHarness(t, []Tool{addTool(false)}, func(o *Options) { o.MaxSteps = 2 })
		h.llm.SetHandler(func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":1,"b":1}`}}}
		})
		var ev events
		res, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("loop")}, ev.add)
		if err != nil {
			t.Fatal(err)
		}
		if msg := checkEnd(t, ev, true); !strings.Contains(msg, "maximum of 2 steps") || res.Error != msg || res.Err == nil {
			t.Fatalf("error = %q, result = %+v", msg, res)
		}
	})
}

// TestStatelessStepTexts: the text of successive steps is separated, not
// glued into one sentence.
func TestStatelessStepTexts(t *testing.T) {
	h := newHarness(t, []Tool{addTool(false)})
	h.llm.Enqueue(
		llmtest.Reply{Text: "Let me check.", ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":1,"b":1}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":2,"b":2}`}}},
		llmtest.Reply{Text: "It is 2 and 4."},
	)
	res, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("add")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Let me check." + StepSeparator + "It is 2 and 4."; res.Content != want || StepSeparator != "\n\n" {
		t.Fatalf("content = %q, want %q", res.Content, want)
	}
}

// TestStatelessToolChoice: a forced choice (required, a named function)
// goes with the first LLM call only, none and auto with every call, and
// the tools stay declared under none.
func TestStatelessToolChoice(t *testing.T) {
	addCall := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":2}`}}}
	weatherCall := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
	answer := llmtest.Reply{Text: "It is 3."}
	named := func(name string) openai.ToolChoice {
		return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: name}}
	}
	// history is a conversation where the client already ran a tool.
	history := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "weather in Paris?"},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_0", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_0", Content: "18°C"},
		{Role: openai.ChatMessageRoleUser, Content: "and add 1 and 2"},
	}
	tests := []struct {
		name    string
		choice  any
		replies []llmtest.Reply
		// want is the raw tool_choice of each LLM call ("" = absent).
		want       []string
		wantFinish string
	}{
		{"required: first call only", "required", []llmtest.Reply{addCall, answer}, []string{`"required"`, ``}, "stop"},
		{"named agent tool: first call only", named("add"), []llmtest.Reply{addCall, answer},
			[]string{`{"type":"function","function":{"name":"add"}}`, ``}, "stop"},
		{"named by pointer", &openai.ToolChoice{Function: openai.ToolFunction{Name: "add"}}, []llmtest.Reply{addCall, answer},
			[]string{`{"type":"function","function":{"name":"add"}}`, ``}, "stop"},
		{"named client tool ends the run", named("get_weather"), []llmtest.Reply{weatherCall},
			[]string{`{"type":"function","function":{"name":"get_weather"}}`}, "tool_calls"},
		// The scripted server calls a tool despite none: the call is dropped
		// and ends the run (see TestStatelessToolChoiceNoneRunsNoTool).
		{"none: sent, a call made anyway is dropped", "none", []llmtest.Reply{addCall}, []string{`"none"`}, "stop"},
		{"auto: every call", "auto", []llmtest.Reply{addCall, answer}, []string{`"auto"`, `"auto"`}, "stop"},
		{"unset: never sent", nil, []llmtest.Reply{addCall, answer}, []string{``, ``}, "stop"},
		{"empty string: never sent", "", []llmtest.Reply{answer}, []string{``}, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, []Tool{addTool(false)})
			h.llm.Enqueue(tt.replies...)
			var ev events
			res, err := h.rt.RunStateless(context.Background(), StatelessRequest{
				AgentID: "tester", Messages: history, ClientTools: []openai.Tool{weatherTool()}, ToolChoice: tt.choice,
			}, ev.add)
			if err != nil {
				t.Fatal(err)
			}
			checkEnd(t, ev, false)
			if res.FinishReason != tt.wantFinish || res.Error != "" {
				t.Fatalf("result = %+v", res)
			}
			reqs := h.requests()
			if len(reqs) != len(tt.want) {
				t.Fatalf("%d LLM calls, want %d", len(reqs), len(tt.want))
			}
			for i, r := range reqs {
				if string(r.ToolChoice) != tt.want[i] {
					t.Fatalf("call %d: tool_choice %s, want %s", i+1, r.ToolChoice, tt.want[i])
				}
				if len(r.Tools) != 2 {
					t.Fatalf("call %d offered %d tools, want add and get_weather", i+1, len(r.Tools))
				}
				if got := roles(r.Messages); len(got) < 5 || got[3] != "tool:18°C#call_0" {
					t.Fatalf("call %d history = %q", i+1, got)
				}
			}
			if tt.wantFinish == "tool_calls" {
				if len(res.ClientToolCalls) != 1 || res.ClientToolCalls[0].ID != "call_w" || len(ev.ofType(EventToolStart)) != 0 {
					t.Fatalf("client calls = %+v, events = %s", res.ClientToolCalls, ev)
				}
			} else if len(ev.ofType(EventToolEnd)) != len(tt.replies)-1 {
				t.Fatalf("agent tool runs: %s", ev)
			}
		})
	}
}

// TestStatelessToolChoiceInvalid: a choice the run cannot honour fails
// before any LLM call, matching ErrInvalidRequest.
func TestStatelessToolChoiceInvalid(t *testing.T) {
	tests := []struct {
		name    string
		agentID string
		choice  any
		// want is the *ToolChoiceError expected, nil for a shape error.
		want *ToolChoiceError
	}{
		{"unknown function", "tester", openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "delete_all"}},
			&ToolChoiceError{Function: "delete_all", AgentID: "tester"}},
		{"function of another agent", "naked", openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "add"}},
			&ToolChoiceError{Function: "add", AgentID: "naked"}},
		{"required without any tool", "naked", "required", &ToolChoiceError{AgentID: "naked"}},
		{"unknown string", "tester", "always", nil},
		{"no function name", "tester", openai.ToolChoice{Type: openai.ToolTypeFunction}, nil},
		{"other type", "tester", openai.ToolChoice{Type: "custom", Function: openai.ToolFunction{Name: "add"}}, nil},
		{"unsupported Go type", "tester", map[string]any{"type": "function"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, []Tool{addTool(false)})
			var ev events
			res, err := h.rt.RunStateless(context.Background(), StatelessRequest{
				AgentID: tt.agentID, Messages: userMsgs("hi"), ToolChoice: tt.choice,
			}, ev.add)
			if res != nil || !errors.Is(err, ErrInvalidRequest) || len(ev) != 0 {
				t.Fatalf("res = %+v, err = %v, events = %s", res, err, ev)
			}
			var tce *ToolChoiceError
			if tt.want != nil && (!errors.As(err, &tce) || *tce != *tt.want) {
				t.Fatalf("err = %#v, want %#v", err, tt.want)
			}
			if tt.want == nil && errors.As(err, &tce) {
				t.Fatalf("shape error reported as %#v", tce)
			}
			if n := len(h.requests()); n != 0 {
				t.Fatalf("%d LLM calls for an invalid choice", n)
			}
		})
	}
}
