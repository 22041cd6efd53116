package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"agentchat/internal/contextwin"
	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

// TestContextWindow runs a 12-turn session with tool calls under a 2k
// context limit: every LLM request stays within the budget (counted with
// the same tokenizer), keeps each assistant tool call with its results and
// the running turn whole, and the store keeps every message.
func TestContextWindow(t *testing.T) {
	h := newHarness(t, []Tool{addTool(false)})
	h.res.mu.Lock()
	h.res.contextLimit, h.res.strategy, h.res.maxTokens = 2, contextwin.Balanced, 200
	h.res.mu.Unlock()
	budget := contextwin.Budget(2, contextwin.Balanced, 200)
	filler := strings.Repeat("The OSPF area is configured on every router of the lab. ", 6)
	h.llm.SetHandler(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == openai.ChatMessageRoleUser && len(req.Tools) > 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":1,"b":2}`}}}
		}
		return llmtest.Reply{Text: "Step done. " + filler}
	})
	k := newKey()
	for turn := 1; turn <= 12; turn++ {
		checkEnd(t, h.turn(k, fmt.Sprintf("Turn %d: %s", turn, filler)), false)
	}
	counter := contextwin.NewCounter("test-model")
	trimmed := false
	for _, r := range h.requests() {
		if len(r.Tools) == 0 {
			continue // the title call
		}
		need := counter.Tools(r.Tools)
		for _, m := range r.Messages {
			need += counter.Message(m)
		}
		if need > budget {
			t.Fatalf("request %d sends %d tokens, budget %d", r.N, need, budget)
		}
		calls := map[string]bool{}
		for _, m := range r.Messages {
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
			if m.Role == openai.ChatMessageRoleTool && !calls[m.ToolCallID] {
				t.Fatalf("request %d has tool result %s without its call", r.N, m.ToolCallID)
			}
		}
		if r.Messages[0].Role != openai.ChatMessageRoleSystem {
			t.Fatalf("request %d lost its system prompt", r.N)
		}
		users := 0
		for _, m := range r.Messages {
			if m.Role == openai.ChatMessageRoleUser {
				users++
			}
		}
		trimmed = users < 12 // the last request's history was cut
	}
	if !trimmed {
		t.Fatal("the history was never trimmed: the test does not exercise the window")
	}
	if n := len(h.messages(k)); n != 12*4 {
		t.Fatalf("store holds %d messages, want all %d", n, 12*4)
	}
}

// TestContextWindowTooLarge: a message that alone exceeds the window is a
// clear error before any LLM call, on both surfaces.
func TestContextWindowTooLarge(t *testing.T) {
	h := newHarness(t, nil)
	h.res.mu.Lock()
	h.res.contextLimit, h.res.strategy = 1, contextwin.Conservative
	h.res.mu.Unlock()
	huge := strings.Repeat("interface GigabitEthernet0/1 ip address 10.0.0.1 255.255.255.0 ", 200)
	ev := h.turn(newKey(), huge)
	msg := checkEnd(t, ev, true)
	if !strings.Contains(msg, "context window") || !strings.Contains(msg, "context_limit 1 k") {
		t.Fatalf("error = %q", msg)
	}
	_, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMessages(huge)}, nil)
	if !errors.Is(err, contextwin.ErrTooLarge) {
		t.Fatalf("stateless: %v", err)
	}
	if n := len(h.requests()); n != 0 {
		t.Fatalf("%d LLM calls", n)
	}
}
