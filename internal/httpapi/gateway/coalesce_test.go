package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/llm"
)

// TestTokensThatArriveTogetherLeaveTogether: tokens the LLM sent in one
// go (llm.Delta.More) leave in one write, as a proxy copying the bytes
// would send them; the last of them is flushed before the LLM is awaited
// again (the LLM sends "d" only once the client has read what came
// before), also when the increment after them writes nothing (a tool call
// of the agent's own, shown only once it runs). The chunks that close a
// completion leave together as well.
func TestTokensThatArriveTogetherLeaveTogether(t *testing.T) {
	abc := []llm.Delta{{Content: "a", More: true}, {Content: "b", More: true}, {Content: "c"}}
	silentAfter := []llm.Delta{{Content: "a", More: true}, {Content: "b", More: true}, {Content: "c", More: true},
		{ToolCall: &llm.ToolCallDelta{ID: "call_1", Name: "not_a_client_tool", First: true}}}
	completions := map[string]any{"stream": true, "messages": []any{userMsg("x")}}
	content := func(t string) string { return `"content":"` + t + `"` }
	tests := []struct {
		name, path string
		body       map[string]any
		first      []llm.Delta
		// token is how a token t shows in the stream.
		token func(t string) string
	}{
		{"completions", "/v1/chat/completions", completions, abc, content},
		{"completions, silent increment after", "/v1/chat/completions", completions, silentAfter, content},
		{"chat", "/v1/chat", map[string]any{"message": "x"}, abc,
			func(t string) string { return `{"token":"` + t + `"}` }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			var log apitest.FlushLog
			// No keep-alive comment may flush what is held: only the stream itself.
			e := newEnv(t, envOptions{client: apitest.PausedClient{First: tc.first, Gate: gate, Then: []llm.Delta{{Content: "d"}}}, wrap: log.Wrap, heartbeat: time.Hour})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			b, err := json.Marshal(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.api.Server.URL+tc.path, bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", e.bearer())
			resp, err := e.api.Server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			var stream strings.Builder
			for sc.Scan() {
				line := sc.Text()
				stream.WriteString(line + "\n")
				if strings.Contains(line, tc.token("c")) {
					close(gate)
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("reading the stream: %v (so far:\n%s)", err, stream.String())
			}
			var first string
			for _, s := range log.Flushed() {
				if strings.Contains(s, tc.token("a")) {
					first = s
				}
			}
			if !strings.Contains(first, tc.token("b")) || !strings.Contains(first, tc.token("c")) || strings.Contains(first, tc.token("d")) {
				t.Fatalf("the write of token a = %q, want a, b and c in it and not d; stream:\n%s", first, stream.String())
			}
			if !strings.Contains(stream.String(), tc.token("d")) || !strings.HasSuffix(stream.String(), "data: [DONE]\n\n") {
				t.Fatalf("stream:\n%s", stream.String())
			}
			if segs := log.Flushed(); tc.path == "/v1/chat/completions" {
				// The finish chunk and [DONE] come at once: one write.
				if last := segs[len(segs)-1]; !strings.Contains(last, `"finish_reason":"stop"`) || !strings.Contains(last, "[DONE]") {
					t.Fatalf("last write %q, want the finish chunk and [DONE]", last)
				}
			}
		})
	}
}
