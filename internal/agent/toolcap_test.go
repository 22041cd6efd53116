package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

func TestCapToolOutput(t *testing.T) {
	tests := []struct {
		name, out string
		max       int
		want      string
	}{
		{"fits", "hello", 5, "hello"},
		{"no cap", strings.Repeat("x", 100), 0, strings.Repeat("x", 100)},
		{"ascii cut", "abcdefgh", 4, "abcd\n[output cut at 4 bytes of 8]"},
		{"cut inside a rune backs off", "aé€", 2, "a\n[output cut at 1 bytes of 6]"},
		{"cut inside a 3-byte rune", "aé€", 4, "aé\n[output cut at 3 bytes of 6]"},
		{"cut on a rune start", "aé€", 3, "aé\n[output cut at 3 bytes of 6]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := capToolOutput(tc.out, tc.max)
			if got != tc.want {
				t.Fatalf("capToolOutput(%q, %d) = %q, want %q", tc.out, tc.max, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("%q is not valid UTF-8", got)
			}
		})
	}
}

// hugeOutput is a 1 MiB tool output of two-byte runes after one ASCII
// byte, so that any even cut falls inside a rune.
var hugeOutput = "a" + strings.Repeat("é", 1<<19)

func hugeTool() Tool {
	return Tool{
		Name: "dump", Description: "Dumps a lot.",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Run:        func(context.Context, json.RawMessage) (string, error) { return hugeOutput, nil },
	}
}

// TestToolOutputIsCapped: a tool returning 1 MiB gives the capped output,
// cut at a UTF-8 boundary with a note, to every reader: the tool_end
// event, the stored tool message and the next LLM call; in a project
// chat turn and on the stateless (/v1) path alike.
func TestToolOutputIsCapped(t *testing.T) {
	tests := []struct {
		name string
		max  int // Options.ToolMaxOutputBytes
		want string
	}{
		{"default 64 KiB", 0, hugeOutput[:65535] + fmt.Sprintf("\n[output cut at 65535 bytes of %d]", len(hugeOutput))},
		{"configured 1000", 1000, hugeOutput[:999] + fmt.Sprintf("\n[output cut at 999 bytes of %d]", len(hugeOutput))},
	}
	dump := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "dump", Arguments: `{}`}}}
	for _, tc := range tests {
		check := func(t *testing.T, h *harness, ev events) {
			t.Helper()
			ends := ev.ofType(EventToolEnd)
			if len(ends) != 1 || ends[0].ToolOutput != tc.want {
				t.Fatalf("tool_end outputs: %d, first %d bytes", len(ends), len(ends[0].ToolOutput))
			}
			// The agent's calls are streamed (the title call is not); the
			// last one follows the tool run.
			var last llmtest.Request
			for _, r := range h.requests() {
				if r.Stream {
					last = r
				}
			}
			var sent []string
			for _, m := range last.Messages {
				if m.Role == openai.ChatMessageRoleTool {
					sent = append(sent, m.Content)
				}
			}
			if len(sent) != 1 || sent[0] != tc.want {
				t.Fatalf("the model got %d tool messages (%d bytes), want the capped output", len(sent), len(strings.Join(sent, "")))
			}
		}
		t.Run(tc.name+", turn", func(t *testing.T) {
			h := newHarness(t, []Tool{hugeTool()}, func(o *Options) { o.ToolMaxOutputBytes = tc.max })
			h.llm.Enqueue(dump, llmtest.Reply{Text: "done"})
			k := newKey()
			ev := h.turn(k, "dump it")
			checkEnd(t, ev, false)
			check(t, h, ev)
			var stored []string
			for _, m := range h.messages(k) {
				if m.Role == store.RoleTool {
					stored = append(stored, m.Content)
				}
			}
			if len(stored) != 1 || stored[0] != tc.want {
				t.Fatalf("stored %d tool messages (%d bytes), want the capped output", len(stored), len(strings.Join(stored, "")))
			}
		})
		t.Run(tc.name+", stateless", func(t *testing.T) {
			h := newHarness(t, []Tool{hugeTool()}, func(o *Options) { o.ToolMaxOutputBytes = tc.max })
			h.llm.Enqueue(dump, llmtest.Reply{Text: "done"})
			var ev events
			if _, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("dump it")}, ev.add); err != nil {
				t.Fatal(err)
			}
			check(t, h, ev)
		})
	}
}
