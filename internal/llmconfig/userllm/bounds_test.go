package userllm

import (
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

// TestUserClientsGetTheBounds: a client built for a user's configuration
// has the server's first-token and idle bounds (LLM_TIMEOUT_SECONDS and
// LLM_IDLE_TIMEOUT_SECONDS), not the whole-call bound nor the defaults.
func TestUserClientsGetTheBounds(t *testing.T) {
	const bound = 300 * time.Millisecond
	tests := []struct {
		name    string
		reply   llmtest.Reply
		want    string
		wantErr string
	}{
		{name: "a steady stream longer than both bounds completes",
			reply: llmtest.Reply{Chunks: []string{"a", " b", " c", " d", " e", " f", " g", " h", " i", " j"}, ChunkDelay: 100 * time.Millisecond},
			want:  "a b c d e f g h i j"},
		{name: "silence after two tokens hits the idle bound",
			reply:   llmtest.Reply{Chunks: []string{"a", " b", " c"}, Hang: true, HangAfter: 3},
			want:    "a b",
			wantErr: "sent nothing for 300ms (LLM_IDLE_TIMEOUT_SECONDS)"},
		{name: "no token hits the first bound",
			reply:   llmtest.Reply{Hang: true},
			wantErr: "no first token within 300ms (LLM_TIMEOUT_SECONDS)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply)
			f := newFixture(t)
			f.r = New(Options{Store: f.st, Secrets: f.box, CallTimeout: bound, IdleTimeout: bound, Guard: testGuard})
			f.add(t, "text", map[string]any{"provider": "openai", "base_url": srv.BaseURL(), "model": "slow-local"}, aliceKey)
			res, err := f.r.Resolve(aliceCtx(), "alice")
			if err != nil || res.Client.Model() != "slow-local" {
				t.Fatalf("resolve: %+v, %v", res, err)
			}
			var got strings.Builder
			out, err := res.Client.Stream(aliceCtx(), llm.Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}},
				func(d llm.Delta) error {
					got.WriteString(d.Content)
					return nil
				})
			if got.String() != tt.want || out.Content != tt.want {
				t.Fatalf("delivered %q, result %q, want %q", got.String(), out.Content, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && !strings.Contains(llm.UserMessage(err), tt.wantErr):
				t.Fatalf("error %v: user message %q, want it to contain %q", err, llm.UserMessage(err), tt.wantErr)
			}
		})
	}
}
