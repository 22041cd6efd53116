package chat_test

import (
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/llm"
)

// TestTokensThatArriveTogetherLeaveTogether: content events of tokens the
// LLM sent in one go (llm.Delta.More) leave in one write; the last of them
// is flushed before the LLM is awaited again (it sends "d" only once the
// client has read "c"), also when the increment after them is not an event
// of the project stream (reasoning).
func TestTokensThatArriveTogetherLeaveTogether(t *testing.T) {
	abc := []llm.Delta{{Content: "a", More: true}, {Content: "b", More: true}, {Content: "c"}}
	tests := []struct {
		name  string
		first []llm.Delta
	}{
		{"content", abc},
		{"reasoning after", append(abc[:2:2], llm.Delta{Content: "c", More: true}, llm.Delta{Reasoning: "hm"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log apitest.FlushLog
			// No heartbeat: only the stream itself may flush what is held.
			e := newEnvOpts(t, time.Hour, apitest.Options{}, log.Wrap)
			gate := make(chan struct{})
			e.resolver.set(apitest.PausedClient{First: tc.first, Gate: gate, Then: []llm.Delta{{Content: "d"}}})
			s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "go"})
			var content strings.Builder
			for {
				ev, ok := s.Next(t)
				if !ok {
					break
				}
				if ev["type"] == "content" {
					content.WriteString(ev["content"].(string))
					if ev["content"] == "c" {
						close(gate)
					}
				}
			}
			if content.String() != "abcd" {
				t.Fatalf("content %q, want abcd", content.String())
			}
			var first string
			for _, seg := range log.Flushed() {
				if strings.Contains(seg, `"content":"a"`) {
					first = seg
				}
			}
			if !strings.Contains(first, `"content":"b"`) || !strings.Contains(first, `"content":"c"`) || strings.Contains(first, `"content":"d"`) {
				t.Fatalf("the write of token a = %q, want a, b and c in it and not d", first)
			}
		})
	}
}
