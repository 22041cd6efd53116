package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

// TestStreamLLMBounds runs turns through /stream against a slow model:
// one that keeps streaming for longer than both bounds completes; one
// that goes silent after two tokens ends with an error event naming
// LLM_IDLE_TIMEOUT_SECONDS (its two tokens kept as an interrupted
// answer); one that never starts names LLM_TIMEOUT_SECONDS.
func TestStreamLLMBounds(t *testing.T) {
	// Ten times the steady stream's gap: a loaded machine delays a chunk
	// by a few hundred milliseconds at worst (300 ms, three times the
	// gap, failed under load).
	const bound = time.Second
	steady := make([]string, 15)
	for i := range steady {
		steady[i] = fmt.Sprintf("w%d ", i)
	}
	tests := []struct {
		name    string
		reply   llmtest.Reply
		content string // the streamed and stored content
		wantErr string // a fragment of the error event, "" for none
	}{
		{name: "steady", reply: llmtest.Reply{Chunks: steady, ChunkDelay: 100 * time.Millisecond},
			content: strings.Join(steady, "")},
		{name: "stalled", reply: llmtest.Reply{Chunks: []string{"one", " two", " three"}, Hang: true, HangAfter: 3},
			content: "one two", wantErr: "sent nothing for 1s (LLM_IDLE_TIMEOUT_SECONDS)"},
		{name: "never starts", reply: llmtest.Reply{Hang: true},
			wantErr: "no first token within 1s (LLM_TIMEOUT_SECONDS)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 0)
			c, err := llm.NewClient(llm.Config{APIKey: apiKey, BaseURL: e.llm.BaseURL(), Model: "slow-model",
				CallTimeout: bound, IdleTimeout: bound, MaxRetries: -1}, llm.WithLogger(discard))
			if err != nil {
				t.Fatal(err)
			}
			e.resolver.set(c)
			e.llm.Enqueue(tt.reply, llmtest.Reply{Text: "Slow model"}) // the answer, then the title
			s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hello"})
			sid := s.Header.Get("X-Session-Id")
			events := s.All(t)
			n := len(events)
			if n == 0 || events[n-1]["type"] != "done" {
				t.Fatalf("events: %s", types(events))
			}
			var content strings.Builder
			errMsg := ""
			for _, ev := range events {
				switch ev["type"] {
				case "content":
					content.WriteString(ev["content"].(string))
				case "error":
					errMsg = ev["error"].(string)
				}
			}
			if content.String() != tt.content {
				t.Fatalf("streamed %q, want %q", content.String(), tt.content)
			}
			switch {
			case tt.wantErr == "" && errMsg != "":
				t.Fatalf("error event %q", errMsg)
			case tt.wantErr != "" && (!strings.Contains(errMsg, tt.wantErr) || events[n-2]["type"] != "error"):
				t.Fatalf("events %s, error %q, want it to contain %q", types(events), errMsg, tt.wantErr)
			}
			msgs, err := e.Store.ListMessages(context.Background(), store.Key{ProjectID: project, UserID: "alice", ThreadID: sid}, 0)
			if err != nil {
				t.Fatal(err)
			}
			var answer *store.Message
			for i := range msgs {
				if msgs[i].Role == store.RoleAssistant {
					answer = &msgs[i]
				}
			}
			switch {
			case tt.content == "" && answer != nil:
				t.Fatalf("an answer was stored: %+v", *answer)
			case tt.content != "" && (answer == nil || answer.Content != tt.content):
				t.Fatalf("stored messages %+v, want an answer %q", msgs, tt.content)
			case tt.wantErr != "" && answer != nil && answer.Metadata["interrupted"] != true:
				t.Fatalf("the cut answer is not marked interrupted: %+v", *answer)
			}
		})
	}
}
