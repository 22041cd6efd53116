package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
)

// TestLLMBounds: on /v1/chat/completions a model that never starts and
// one that stalls mid-answer get the same OpenAI-shaped error (504,
// code llm_timeout) before a stream or inside it, the message naming the
// bound that was hit; a steady slow stream completes.
func TestLLMBounds(t *testing.T) {
	const bound = 300 * time.Millisecond
	tests := []struct {
		name    string
		stream  bool
		reply   llmtest.Reply
		content string
		wantErr string // a fragment of the error message, "" for success
	}{
		{name: "steady stream", stream: true,
			reply:   llmtest.Reply{Chunks: []string{"a", " b", " c", " d", " e", " f", " g", " h"}, ChunkDelay: 100 * time.Millisecond},
			content: "a b c d e f g h"},
		{name: "stalled stream", stream: true,
			reply:   llmtest.Reply{Chunks: []string{"one", " two", " three"}, Hang: true, HangAfter: 3},
			content: "one two", wantErr: "(LLM_IDLE_TIMEOUT_SECONDS)"},
		{name: "stream that never starts", stream: true, reply: llmtest.Reply{Hang: true},
			wantErr: "no first token within 300ms (LLM_TIMEOUT_SECONDS)"},
		{name: "non-streamed, never starts", reply: llmtest.Reply{Hang: true},
			wantErr: "no first token within 300ms (LLM_TIMEOUT_SECONDS)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			c, err := llm.NewClient(llm.Config{APIKey: llmKey, BaseURL: srv.BaseURL(), Model: "slow-model",
				CallTimeout: bound, IdleTimeout: bound, MaxRetries: -1}, llm.WithLogger(discard))
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, envOptions{client: c})
			srv.Enqueue(tt.reply)
			r := e.post("/v1/chat/completions", map[string]any{"stream": tt.stream, "messages": []any{userMsg("x")}})
			var errBody openAIError
			content := ""
			if r.Status == http.StatusOK && tt.stream {
				s := parseCompletionStream(t, r.Body)
				content = s.content
				if s.errorMsg != "" {
					data, _ := events(t, r.Body)
					if err := json.Unmarshal([]byte(data[len(data)-2]), &errBody); err != nil {
						t.Fatal(err)
					}
				}
			} else if r.Status != http.StatusOK {
				errBody = checkError(t, r, http.StatusGatewayTimeout, "server_error")
			}
			if content != tt.content {
				t.Fatalf("content %q, want %q: %s", content, tt.content, r.Body)
			}
			if tt.wantErr == "" {
				if errBody.Error != nil || r.Status != http.StatusOK {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				return
			}
			if errBody.Error == nil || errBody.Error.Code == nil || *errBody.Error.Code != "llm_timeout" ||
				!strings.Contains(errBody.Error.Message, tt.wantErr) {
				t.Fatalf("%d %s: want code llm_timeout and a message containing %q", r.Status, r.Body, tt.wantErr)
			}
		})
	}
}
