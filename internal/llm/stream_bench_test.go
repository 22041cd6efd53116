package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentchat/internal/llm"

	openai "github.com/sashabaranov/go-openai"
)

// benchChunks is the number of content chunks the benchmark server streams.
const benchChunks = 20

// benchSSE is a streamed answer as OpenAI sends it: a role chunk,
// benchChunks content chunks, the finish chunk, the usage chunk, [DONE].
func benchSSE() []string {
	const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_bench",`
	lines := []string{head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`}
	for i := range benchChunks {
		lines = append(lines, head+fmt.Sprintf(`"choices":[{"index":0,"delta":{"content":" word%d"},"logprobs":null,"finish_reason":null}],"usage":null}`, i))
	}
	lines = append(lines,
		head+`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
		head+`"choices":[],"usage":{"prompt_tokens":812,"completion_tokens":20,"total_tokens":832,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
		"[DONE]")
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "data: " + l + "\n\n"
	}
	return out
}

// benchRequest is an agent turn: a system prompt, a history with tool
// calls and results, and a dozen tool declarations.
func benchRequest() llm.Request {
	tools := make([]openai.Tool, 12)
	for i := range tools {
		tools[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: "Runs a command on a node of the lab and returns its output <as text> & more.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"node":{"type":"string","description":"The node name."},` +
				`"command":{"type":"string","description":"The command to run, e.g. show ip route."},` +
				`"timeout":{"type":"integer","minimum":1,"maximum":60}},"required":["node","command"],"additionalProperties":false}`),
		}}
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: strings.Repeat("You are a network engineering copilot. Be precise.\n", 30)},
		{Role: openai.ChatMessageRoleUser, Content: "Why can R1 not reach R2? Check the routes, café ✓."},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "tool_0", Arguments: `{"node":"R1","command":"show ip route"}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: strings.Repeat("O    10.0.0.0/24 [110/2] via 192.168.1.2, 00:01:02, Gi0/0\n", 20)},
		{Role: openai.ChatMessageRoleAssistant, Content: "The route to 10.0.0.0/24 is learned by OSPF; let me check R2."},
		{Role: openai.ChatMessageRoleUser, Content: "Go on."},
	}
	temp := float32(0.2)
	return llm.Request{Messages: msgs, Tools: tools, ToolChoice: "auto", Temperature: &temp, MaxTokens: 1024}
}

// BenchmarkStream20Chunks is one streamed call of an agent turn against a
// local server streaming 20 content chunks, flushed one by one (client and
// server run in the same process: their allocations add up).
func BenchmarkStream20Chunks(b *testing.B) {
	lines := benchSSE()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for _, l := range lines {
			_, _ = io.WriteString(w, l)
			fl.Flush()
		}
	}))
	defer srv.Close()
	c, err := llm.NewClient(llm.Config{APIKey: testKey, BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini"},
		llm.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	ctx := context.Background()
	onDelta := func(llm.Delta) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Stream(ctx, req, onDelta)
		if err != nil {
			b.Fatal(err)
		}
		if res.Usage.TotalTokens != 832 {
			b.Fatalf("result %+v", res)
		}
	}
}
