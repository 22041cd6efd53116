package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/llm/llmtest"
)

// chatRoutes are the four ways to ask media-agent something.
var chatRoutes = []struct {
	name string
	path string
	body func(msg string) map[string]any
}{
	{"completions stream", "/v1/chat/completions", func(m string) map[string]any {
		return map[string]any{"model": "media-agent", "stream": true, "messages": []any{userMsg(m)}}
	}},
	{"completions", "/v1/chat/completions", func(m string) map[string]any {
		return map[string]any{"model": "media-agent", "messages": []any{userMsg(m)}}
	}},
	{"chat", "/v1/chat", func(m string) map[string]any { return map[string]any{"agent_id": "media-agent", "message": m} }},
	{"chat sync", "/v1/chat/sync", func(m string) map[string]any { return map[string]any{"agent_id": "media-agent", "message": m} }},
}

// TestRetryAllowedBeforeAnyTool: an agent that may have side effects gets
// no x-should-retry on an error answered before anything ran (a 429 of the
// LLM), so that the SDKs' own 429 retry applies.
func TestRetryAllowedBeforeAnyTool(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, rt := range chatRoutes {
		t.Run(rt.name, func(t *testing.T) {
			e.llm.Enqueue(llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}}})
			r := e.post(rt.path, rt.body("request Dune"))
			checkError(t, r, http.StatusTooManyRequests, "rate_limit_error")
			if r.Header.Get("X-Should-Retry") != "" || r.Header.Get("Retry-After") != "7" {
				t.Fatalf("headers %v", r.Header)
			}
		})
	}
}

// TestLateFailureStatus: a non-streamed run that fails after a tool step
// answers the status of the failure (429 with Retry-After, 502 for the
// provider), not a generic 500, with x-should-retry: false only once a
// side-effecting tool ran.
func TestLateFailureStatus(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, rt := range chatRoutes {
		if strings.Contains(rt.name, "stream") || rt.name == "chat" {
			continue
		}
		t.Run(rt.name+" read-only tool then 429", func(t *testing.T) {
			e.llm.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get_trending", Arguments: `{}`}}},
				llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}}},
			)
			r := e.post(rt.path, rt.body("what's trending?"))
			body := checkError(t, r, http.StatusTooManyRequests, "rate_limit_error")
			if r.Header.Get("X-Should-Retry") != "" || r.Header.Get("Retry-After") != "7" || body.Error.Code == nil || *body.Error.Code != "llm_rate_limit" {
				t.Fatalf("headers %v body %s", r.Header, r.Body)
			}
		})
		t.Run(rt.name+" request then 500", func(t *testing.T) {
			e.llm.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "request_media", Arguments: `{"media_type":"movie","tmdb_id":438631}`}}},
				llmtest.Reply{Status: 500},
			)
			r := e.post(rt.path, rt.body("request Dune"))
			body := checkError(t, r, http.StatusBadGateway, "server_error")
			if r.Header.Get("X-Should-Retry") != "false" || !strings.Contains(body.Error.Message, "LLM provider failed") {
				t.Fatalf("headers %v body %s", r.Header, r.Body)
			}
		})
	}
}

// TestStepTextsSeparated: the text of two steps of the agent (before and
// after a tool) reaches the client as two paragraphs, on every route.
func TestStepTextsSeparated(t *testing.T) {
	e := newEnv(t, envOptions{})
	const want = "Let me check.\n\nDune is available."
	for _, rt := range chatRoutes {
		t.Run(rt.name, func(t *testing.T) {
			e.llm.Enqueue(
				llmtest.Reply{Text: "Let me check.", ToolCalls: []llmtest.ToolCall{{Name: "get_trending", Arguments: `{}`}}},
				llmtest.Reply{Text: "Dune is available."},
			)
			r := e.post(rt.path, rt.body("is Dune there?"))
			if r.Status != http.StatusOK {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if got := answerText(t, rt.name, r); got != want {
				t.Fatalf("text = %q, want %q", got, want)
			}
		})
	}
}

// answerText is the assistant text of a successful answer of any route.
func answerText(t *testing.T, route string, r *apitest.Response) string {
	t.Helper()
	switch route {
	case "completions stream":
		return parseCompletionStream(t, r.Body).content
	case "completions":
		var c struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		r.JSON(t, &c)
		if len(c.Choices) != 1 {
			t.Fatalf("choices in %s", r.Body)
		}
		return c.Choices[0].Message.Content
	case "chat":
		data, _ := events(t, r.Body)
		var b strings.Builder
		for _, d := range data[:len(data)-1] {
			var tok openaiwire.Token
			if err := json.Unmarshal([]byte(d), &tok); err != nil {
				t.Fatalf("event %q: %v", d, err)
			}
			b.WriteString(tok.Token)
		}
		return b.String()
	}
	var s openaiwire.SyncResponse
	r.JSON(t, &s)
	return s.Response
}
