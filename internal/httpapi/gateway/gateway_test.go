package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/seerr"
)

func TestRootAgentsModels(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, p := range []string{"/v1/", "/v1"} {
		r := e.api.Do(http.MethodGet, p, "", nil)
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"status":"ok"}` {
			t.Fatalf("GET %s = %d %s", p, r.Status, r.Body)
		}
	}

	r := e.api.Do(http.MethodGet, "/v1/agents", "", nil)
	checkError(t, r, http.StatusUnauthorized, "authentication_error")
	if r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatal("401 without WWW-Authenticate")
	}
	r = e.api.Do(http.MethodGet, "/v1/models", "Bearer nonsense", nil)
	checkError(t, r, http.StatusUnauthorized, "authentication_error")

	r = e.api.As("alice", http.MethodGet, "/v1/agents", nil)
	var list []openaiwire.AgentInfo
	r.JSON(t, &list)
	if len(list) != 3 || list[0].ID != agents.GNS3Copilot || list[1].ID != agents.MediaAgent || list[2].ID != agents.Naked || list[1].Description == "" {
		t.Fatalf("agents = %+v", list)
	}

	r = e.api.As("alice", http.MethodGet, "/v1/models", nil)
	var models openaiwire.ModelList
	r.JSON(t, &models)
	if models.Object != "list" || len(models.Data) != 3 {
		t.Fatalf("models = %s", r.Body)
	}
	r = e.api.As("alice", http.MethodGet, "/v1/models/naked", nil)
	var m openaiwire.Model
	r.JSON(t, &m)
	if r.Status != http.StatusOK || m.ID != "naked" || m.Object != "model" || m.Created != models.Data[2].Created {
		t.Fatalf("model = %d %s", r.Status, r.Body)
	}
	body := checkError(t, e.api.As("alice", http.MethodGet, "/v1/models/gpt-4o", nil), http.StatusNotFound, "not_found_error")
	if *body.Error.Code != "model_not_found" || *body.Error.Param != "model" {
		t.Fatalf("404 body = %+v", body.Error)
	}
	checkError(t, e.api.As("alice", http.MethodGet, "/v1/nowhere", nil), http.StatusNotFound, "not_found_error")
}

func TestCORS(t *testing.T) {
	e := newEnv(t, envOptions{})
	req, _ := http.NewRequest(http.MethodOptions, e.base+"/chat/completions", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-stainless-os,x-stainless-new-thing")
	resp, err := e.api.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		h.Get("Access-Control-Allow-Headers") != "authorization,content-type,x-stainless-os,x-stainless-new-thing" {
		t.Fatalf("preflight = %d %v", resp.StatusCode, h)
	}
	e.llm.Enqueue(llmtest.Reply{Text: "hi"})
	r := e.post("/v1/chat/completions", map[string]any{"model": "naked", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Expose-Headers")), "x-should-retry") {
		t.Fatalf("CORS headers = %v", r.Header)
	}
}

func userMsg(s string) map[string]any { return map[string]any{"role": "user", "content": s} }

// TestStreamFormat checks the raw wire format of a streamed completion,
// with and without usage.
func TestStreamFormat(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, usage := range []bool{false, true} {
		e.llm.Enqueue(llmtest.Reply{Text: "Hello there, friend.", Reasoning: "thinking hard", Usage: &llmtest.Usage{PromptTokens: 5, CompletionTokens: 4}})
		body := map[string]any{"model": "naked", "stream": true, "messages": []any{userMsg("hi")}}
		if usage {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
		r := e.post("/v1/chat/completions", body)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" || r.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("status %d headers %v", r.Status, r.Header)
		}
		if r.Header.Get("X-Should-Retry") != "" {
			t.Fatal("x-should-retry on an agent without side effects")
		}
		s := parseCompletionStream(t, r.Body)
		if s.content != "Hello there, friend." || s.reasoning != "thinking hard" || s.finish != "stop" || s.errorMsg != "" {
			t.Fatalf("usage=%v summary = %+v", usage, s)
		}
		if s.chunks[0].Model != "naked" || !strings.HasPrefix(s.chunks[0].ID, "chatcmpl-") {
			t.Fatalf("first chunk = %+v", s.chunks[0])
		}
		switch {
		case usage && (s.usage == nil || *s.usage != openaiwire.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: 9}):
			t.Fatalf("usage = %+v", s.usage)
		case !usage && s.usage != nil:
			t.Fatal("usage chunk without include_usage")
		}
		for _, c := range s.chunks {
			if (len(c.Usage) != 0) != usage {
				t.Fatalf("usage=%v: chunk usage field %q", usage, c.Usage)
			}
		}
	}
}

// TestLibreChatTitle: a system-only request for an unknown model with
// max_tokens 16 is answered by the fallback agent.
func TestLibreChatTitle(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.llm.Enqueue(llmtest.Reply{Text: "Weekend Movie Plans"})
	r := e.post("/v1/chat/completions", map[string]any{
		"model": "gpt-3.5-turbo", "max_tokens": 16, "temperature": 0.2, "user": "u-1", "presence_penalty": 0,
		"messages": []any{map[string]any{"role": "system", "content": "Write a concise title for this conversation: user: what should we watch?"}},
	})
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var got struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	r.JSON(t, &got)
	if got.Model != "gpt-3.5-turbo" || len(got.Choices) != 1 || got.Choices[0].Message.Content != "Weekend Movie Plans" {
		t.Fatalf("answer = %s", r.Body)
	}
	if r.Header.Get("X-Agent-Id") != "naked" {
		t.Fatalf("agent = %q", r.Header.Get("X-Agent-Id"))
	}
	req := e.llm.Requests()[0]
	if req.MaxTokens != 16 || len(req.Tools) != 0 {
		t.Fatalf("max_tokens %d tools %d", req.MaxTokens, len(req.Tools))
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role != "user" || !strings.Contains(last.Content, "concise title") {
		t.Fatalf("prompt = %+v", req.Messages)
	}
}

// TestRequestConversion: content parts, roles, stop, max tokens and agent
// resolution reach the LLM as they should.
func TestRequestConversion(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		name  string
		body  map[string]any
		agent string
		model string
		check func(t *testing.T, req llmtest.Request)
	}{
		{
			name: "parts and roles",
			body: map[string]any{"model": "naked", "messages": []any{
				map[string]any{"role": "developer", "content": "Speak French."},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "first"}, map[string]any{"type": "text", "text": "second"}}},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "f", "arguments": `{"a":1}`}}}},
				map[string]any{"role": "tool", "tool_call_id": "c1", "content": []any{map[string]any{"type": "text", "text": "result"}}},
				map[string]any{"role": "user", "content": "thanks", "name": "bob"},
			}},
			agent: "naked", model: "naked",
			check: func(t *testing.T, req llmtest.Request) {
				m := req.Messages
				if len(m) != 6 || m[1].Role != "system" || m[1].Content != "Speak French." || m[2].Content != "first\nsecond" ||
					m[3].Role != "assistant" || len(m[3].ToolCalls) != 1 || m[3].ToolCalls[0].Function.Arguments != `{"a":1}` ||
					m[4].Role != "tool" || m[4].ToolCallID != "c1" || m[4].Content != "result" || m[5].Name != "bob" {
					t.Fatalf("messages = %+v", m)
				}
			},
		},
		{
			name:  "stop string, max_completion_tokens wins, agent_id wins",
			body:  map[string]any{"agent_id": "media-agent", "model": "naked", "stop": "\n\n", "max_tokens": 10, "max_completion_tokens": 20, "messages": []any{userMsg("x")}},
			agent: "media-agent", model: "media-agent",
			check: func(t *testing.T, req llmtest.Request) {
				if !slices.Equal(req.Stop, []string{"\n\n"}) || req.MaxTokens != 20 || len(req.Tools) != 5 {
					t.Fatalf("stop %q max %d tools %d", req.Stop, req.MaxTokens, len(req.Tools))
				}
			},
		},
		{
			name:  "unknown agent_id falls back",
			body:  map[string]any{"agent_id": "nope", "messages": []any{userMsg("x")}, "tool_choice": "none", "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "t"}}}},
			agent: "naked", model: "naked",
			check: func(t *testing.T, req llmtest.Request) {
				if len(req.Tools) != 1 || string(req.ToolChoice) != `"none"` {
					t.Fatalf("tool_choice none: %d tools, tool_choice %s", len(req.Tools), req.ToolChoice)
				}
			},
		},
		{
			name:  "model selects",
			body:  map[string]any{"model": "media-agent", "messages": []any{userMsg("x")}, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "t"}}}},
			agent: "media-agent", model: "media-agent",
			check: func(t *testing.T, req llmtest.Request) {
				if len(req.Tools) != 6 || req.Tools[5].Function.Name != "t" {
					t.Fatalf("tools = %+v", req.Tools)
				}
				if b, _ := json.Marshal(req.Tools[5].Function.Parameters); string(b) != `{"properties":{},"type":"object"}` {
					t.Fatalf("default parameters = %s", b)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.llm.Enqueue(llmtest.Reply{Text: "ok"})
			n := len(e.llm.Requests())
			r := e.post("/v1/chat/completions", tc.body)
			if r.Status != http.StatusOK {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			var got struct {
				Model string `json:"model"`
			}
			r.JSON(t, &got)
			if got.Model != tc.model || r.Header.Get("X-Agent-Id") != tc.agent {
				t.Fatalf("model %q agent %q", got.Model, r.Header.Get("X-Agent-Id"))
			}
			reqs := e.llm.Requests()
			if len(reqs) != n+1 {
				t.Fatalf("llm calls = %d", len(reqs)-n)
			}
			tc.check(t, reqs[n])
		})
	}
}

// TestInvalidRequests: every invalid body is a 400 naming the problem,
// and nothing reaches the LLM.
func TestInvalidRequests(t *testing.T) {
	e := newEnv(t, envOptions{})
	msgs := []any{userMsg("x")}
	tests := []struct {
		name, path string
		body       any
		param      string
		status     int
	}{
		{"malformed", "/v1/chat/completions", `{"messages":`, "", 400},
		{"not an object", "/v1/chat/completions", `[1,2]`, "", 400},
		{"empty body", "/v1/chat/completions", ``, "", 400},
		{"wrong type", "/v1/chat/completions", `{"messages":"hi"}`, "", 400},
		{"no messages", "/v1/chat/completions", map[string]any{"model": "naked"}, "messages", 400},
		{"temperature", "/v1/chat/completions", map[string]any{"messages": msgs, "temperature": -0.1}, "temperature", 400},
		{"max_tokens 0", "/v1/chat/completions", map[string]any{"messages": msgs, "max_tokens": 0}, "max_tokens", 400},
		{"max_completion_tokens", "/v1/chat/completions", map[string]any{"messages": msgs, "max_completion_tokens": -5}, "max_completion_tokens", 400},
		{"n", "/v1/chat/completions", map[string]any{"messages": msgs, "n": 2}, "n", 400},
		{"stop type", "/v1/chat/completions", map[string]any{"messages": msgs, "stop": 3}, "stop", 400},
		{"stop count", "/v1/chat/completions", map[string]any{"messages": msgs, "stop": []string{"a", "b", "c", "d", "e"}}, "stop", 400},
		{"role", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "robot", "content": "x"}}}, "messages[0].role", 400},
		{"missing role", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"content": "x"}}}, "messages[0].role", 400},
		{"function role", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "function", "content": "x", "name": "f"}}}, "messages[0].role", 400},
		{"tool without id", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "tool", "content": "x"}}}, "messages[0].tool_call_id", 400},
		{"image part", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "what is this?"}, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}}}}}}, "messages[0].content[1]", 400},
		{"content number", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": 5}}}, "messages[0].content", 400},
		{"part without text", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text"}}}}}, "messages[0].content[0].text", 400},
		{"tool type", "/v1/chat/completions", map[string]any{"messages": msgs, "tools": []any{map[string]any{"type": "custom", "custom": map[string]any{}}}}, "tools[0].type", 400},
		{"tool name", "/v1/chat/completions", map[string]any{"messages": msgs, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "bad name"}}}}, "tools[0].function.name", 400},
		{"tool params", "/v1/chat/completions", map[string]any{"messages": msgs, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "f", "parameters": "x"}}}}, "tools[0].function.parameters", 400},
		{"duplicate tool", "/v1/chat/completions", map[string]any{"messages": msgs, "tools": []any{
			map[string]any{"type": "function", "function": map[string]any{"name": "f"}}, map[string]any{"type": "function", "function": map[string]any{"name": "f"}}}}, "tools[1].function.name", 400},
		{"tool call args", "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "f", "arguments": 5}}}}}}, "messages[0].tool_calls[0].function.arguments", 400},
		{"tool_choice string", "/v1/chat/completions", map[string]any{"messages": msgs, "tool_choice": "always"}, "tool_choice", 400},
		{"tool_choice number", "/v1/chat/completions", map[string]any{"messages": msgs, "tool_choice": 1}, "tool_choice", 400},
		{"tool_choice type", "/v1/chat/completions", map[string]any{"messages": msgs, "tool_choice": map[string]any{"type": "allowed_tools"}}, "tool_choice.type", 400},
		{"tool_choice no function", "/v1/chat/completions", map[string]any{"messages": msgs, "tool_choice": map[string]any{"type": "function"}}, "tool_choice.function", 400},
		{"tool_choice function name", "/v1/chat/completions", map[string]any{"messages": msgs, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "a b"}}}, "tool_choice.function.name", 400},
		{"tool_choice unknown function", "/v1/chat/completions", map[string]any{"model": "media-agent", "messages": msgs, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "nope"}}}, "tool_choice", 400},
		{"tool_choice required without tools", "/v1/chat/completions", map[string]any{"model": "naked", "messages": msgs, "tool_choice": "required"}, "tool_choice", 400},
		{"tool_choice required without tools, streamed", "/v1/chat/completions", map[string]any{"model": "naked", "stream": true, "messages": msgs, "tool_choice": "required"}, "tool_choice", 400},
		{"too large", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("a", gateway.MaxBodyBytes) + `"}]}`, "", 413},
		{"chat no message", "/v1/chat", map[string]any{"agent_id": "naked"}, "message", 400},
		{"chat blank", "/v1/chat", map[string]any{"message": "  "}, "message", 400},
		{"chat long", "/v1/chat", map[string]any{"message": strings.Repeat("a", openaiwire.MaxMessageBytes+1)}, "message", 400},
		{"chat temperature", "/v1/chat/sync", map[string]any{"message": "x", "temperature": 9}, "temperature", 400},
		{"chat max_tokens", "/v1/chat/sync", map[string]any{"message": "x", "max_tokens": 0}, "max_tokens", 400},
		{"sync bad messages", "/v1/chat/sync", map[string]any{"messages": []any{map[string]any{"role": "x"}}}, "messages[0].role", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(tc.path, tc.body)
			typ := "invalid_request_error"
			body := checkError(t, r, tc.status, typ)
			if tc.param != "" && (body.Error.Param == nil || *body.Error.Param != tc.param) {
				t.Fatalf("param = %v, want %s (%s)", body.Error.Param, tc.param, r.Body)
			}
		})
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("%d invalid requests reached the LLM", n)
	}
}

func TestChatTokenStream(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.llm.Enqueue(llmtest.Reply{Text: "Hi Alice, how are you?"})
	r := e.post("/v1/chat", map[string]any{"agent_id": "naked", "message": "Hello", "temperature": 0.7, "stop": []string{"###"},
		"messages": []any{map[string]any{"role": "user", "content": "My name is Alice."}, map[string]any{"role": "assistant", "content": "Nice to meet you."}}})
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v %s", r.Status, r.Header, r.Body)
	}
	data, _ := events(t, r.Body)
	if len(data) < 2 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("events = %q", data)
	}
	var text strings.Builder
	for _, d := range data[:len(data)-1] {
		var tok openaiwire.Token
		if err := json.Unmarshal([]byte(d), &tok); err != nil || strings.Contains(d, "error") {
			t.Fatalf("event %q", d)
		}
		text.WriteString(tok.Token)
	}
	if text.String() != "Hi Alice, how are you?" || len(data) < 4 {
		t.Fatalf("tokens %q (%d events): not streamed token by token", text.String(), len(data))
	}
	req := e.llm.Requests()[0]
	m := req.Messages
	if len(m) != 4 || m[1].Content != "My name is Alice." || m[2].Role != "assistant" || m[3].Content != "Hello" ||
		req.Temperature == nil || *req.Temperature != 0.7 || !slices.Equal(req.Stop, []string{"###"}) {
		t.Fatalf("request = %+v", req)
	}

	// A failure after the stream started is an error event, then [DONE].
	e.llm.Enqueue(llmtest.Reply{Text: "a b c d e f", StreamError: "boom", StreamErrorAfter: 3})
	r = e.post("/v1/chat", map[string]any{"message": "again"})
	data, _ = events(t, r.Body)
	if len(data) < 3 || data[len(data)-1] != "[DONE]" || !strings.HasPrefix(data[len(data)-2], `{"error":{"message":"The LLM provider failed`) {
		t.Fatalf("events = %q", data)
	}

	// A failure before any token is a status.
	e.llm.Enqueue(llmtest.Reply{Status: 503})
	checkError(t, e.post("/v1/chat", map[string]any{"message": "again"}), http.StatusBadGateway, "server_error")
}

func TestChatSync(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get_trending", Arguments: `{}`}}, Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 2}},
		llmtest.Reply{Text: "Trending now: Dune.", Usage: &llmtest.Usage{PromptTokens: 20, CompletionTokens: 4}},
	)
	r := e.post("/v1/chat/sync", map[string]any{"model": "media-agent", "message": "What's trending?"})
	var got openaiwire.SyncResponse
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.AgentID != "media-agent" || got.Response != "Trending now: Dune." ||
		got.Usage != (openaiwire.Usage{PromptTokens: 30, CompletionTokens: 6, TotalTokens: 36}) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r.Header.Get("X-Should-Retry") != "" {
		t.Fatal("x-should-retry after a read-only tool")
	}
	checkError(t, e.api.Do(http.MethodPost, "/v1/chat/sync", "", map[string]any{"message": "x"}), http.StatusUnauthorized, "authentication_error")
}

// TestSideEffectsNoRetry: once request_media ran, a failure tells clients
// not to retry; a streamed request to an agent with side-effecting tools
// says so up front.
func TestSideEffectsNoRetry(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "request_media", Arguments: `{"media_type":"movie","tmdb_id":438631}`}}},
		llmtest.Reply{Status: 500},
	)
	r := e.post("/v1/chat/completions", map[string]any{"model": "media-agent", "messages": []any{userMsg("request Dune")}})
	body := checkError(t, r, http.StatusBadGateway, "server_error")
	if r.Header.Get("X-Should-Retry") != "false" || !strings.Contains(body.Error.Message, "LLM provider failed") {
		t.Fatalf("headers %v body %s", r.Header, r.Body)
	}
	if len(e.seerr.Created()) != 1 {
		t.Fatal("request_media did not run")
	}

	e.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "request_media", Arguments: `{"media_type":"tv","tmdb_id":100088}`}}},
		llmtest.Reply{Text: "Requested."},
	)
	r = e.post("/v1/chat/sync", map[string]any{"agent_id": "media-agent", "message": "request The Last of Us"})
	if r.Status != http.StatusOK || r.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("%d %v", r.Status, r.Header)
	}

	e.llm.Enqueue(llmtest.Reply{Text: "Hi"})
	r = e.post("/v1/chat/completions", map[string]any{"model": "media-agent", "stream": true, "messages": []any{userMsg("hi")}})
	if r.Status != http.StatusOK || r.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("stream: %d %v", r.Status, r.Header)
	}
}

// blockingRegistry has one agent whose tool waits until release is closed.
func blockingRegistry(started chan<- struct{}, release <-chan struct{}) func(*seerr.Client) *agent.Registry {
	return func(*seerr.Client) *agent.Registry {
		reg := agent.NewRegistry("slow")
		reg.Register(&agent.Agent{ID: "slow", SystemPrompt: "Slow.", Skills: []agent.Skill{{Name: "slow", Tools: []agent.Tool{{
			Name: "wait", Description: "waits", Parameters: json.RawMessage(`{"type":"object"}`),
			Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
				close(started)
				select {
				case <-release:
					return "waited", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			},
		}}}}})
		return reg
	}
}

// TestHeartbeatDuringTool: while a tool runs, keep-alive comments flow
// (the tool waits until the client has seen one).
func TestHeartbeatDuringTool(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, envOptions{heartbeat: 5 * time.Millisecond, registry: blockingRegistry(started, release)})
	e.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{}`}}}, llmtest.Reply{Text: "Finished."})
	for _, path := range []string{"/v1/chat/completions", "/v1/chat"} {
		if path == "/v1/chat" {
			started, release = make(chan struct{}), make(chan struct{})
			e = newEnv(t, envOptions{heartbeat: 5 * time.Millisecond, registry: blockingRegistry(started, release)})
			e.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{}`}}}, llmtest.Reply{Text: "Finished."})
		}
		body := `{"model":"slow","stream":true,"message":"go","messages":[{"role":"user","content":"go"}]}`
		if path == "/v1/chat" {
			body = `{"message":"go"}`
		}
		req, _ := http.NewRequest(http.MethodPost, e.api.Server.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", e.bearer())
		resp, err := e.api.Server.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		<-started
		sawBeat := false
		var rest strings.Builder
		for sc.Scan() {
			line := sc.Text()
			if line == ": keep-alive" && !sawBeat {
				sawBeat = true
				close(release)
			}
			rest.WriteString(line + "\n")
		}
		resp.Body.Close()
		if !sawBeat || !strings.Contains(rest.String(), "Finished.") || !strings.HasSuffix(rest.String(), "data: [DONE]\n\n") {
			t.Fatalf("%s: beat=%v stream:\n%s", path, sawBeat, rest.String())
		}
	}
}

// panicClient streams one token and panics.
type panicClient struct{ before bool }

func (p panicClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Result, error) {
	if !p.before {
		_ = onDelta(llm.Delta{Content: "partial"})
	}
	panic("boom")
}

func (p panicClient) Complete(ctx context.Context, req llm.Request) (*llm.Result, error) {
	return nil, errors.New("not used")
}

func (p panicClient) Model() string { return "panic-model" }

// TestPanicRecovery: a panic after the stream started ends it with an
// error event and [DONE]; before, it is a 500.
func TestPanicRecovery(t *testing.T) {
	e := newEnv(t, envOptions{client: panicClient{}})
	r := e.post("/v1/chat/completions", map[string]any{"stream": true, "messages": []any{userMsg("x")}})
	s := parseCompletionStream(t, r.Body)
	if r.Status != http.StatusOK || s.content != "partial" || s.errorMsg == "" || strings.Contains(s.errorMsg, "boom") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r = e.post("/v1/chat", map[string]any{"message": "x"})
	data, _ := events(t, r.Body)
	if len(data) != 3 || data[0] != `{"token":"partial"}` || !strings.HasPrefix(data[1], `{"error":`) || data[2] != "[DONE]" {
		t.Fatalf("chat events = %q", data)
	}
	r = e.post("/v1/chat/completions", map[string]any{"messages": []any{userMsg("x")}})
	checkError(t, r, http.StatusInternalServerError, "server_error")

	e = newEnv(t, envOptions{client: panicClient{before: true}})
	r = e.post("/v1/chat/completions", map[string]any{"stream": true, "messages": []any{userMsg("x")}})
	checkError(t, r, http.StatusInternalServerError, "server_error")
}

// TestDeadline: a run that outlives the gateway's deadline is stopped,
// with a status before any token and an error event after.
func TestDeadline(t *testing.T) {
	e := newEnv(t, envOptions{timeout: 50 * time.Millisecond})
	e.llm.Enqueue(llmtest.Reply{Hang: true})
	checkError(t, e.post("/v1/chat/completions", map[string]any{"messages": []any{userMsg("x")}}), http.StatusGatewayTimeout, "server_error")
	e.llm.Enqueue(llmtest.Reply{Text: "a b c", Hang: true, HangAfter: 2})
	r := e.post("/v1/chat/completions", map[string]any{"stream": true, "messages": []any{userMsg("x")}})
	if s := parseCompletionStream(t, r.Body); s.errorMsg == "" || s.content == "" {
		t.Fatalf("stream = %s", r.Body)
	}
	for range 2 {
		<-e.llm.Disconnects() // the upstream calls were cancelled
	}
}

// TestParallelAgentTools: parallel calls of agent tools run server-side
// and show as reasoning, never as tool_calls.
func TestParallelAgentTools(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.llm.Enqueue(
		llmtest.Reply{Interleave: true, ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "search_media", Arguments: `{"query":"Dune"}`},
			{ID: "call_b", Name: "get_trending", Arguments: `{}`},
		}},
		llmtest.Reply{Text: "Dune is not requested yet; trending is Oppenheimer."},
	)
	r := e.post("/v1/chat/completions", map[string]any{"model": "media-agent", "stream": true, "messages": []any{userMsg("Dune? and trending?")}})
	s := parseCompletionStream(t, r.Body)
	for _, c := range s.chunks {
		if len(c.Choices) > 0 && len(c.Choices[0].Delta.ToolCalls) > 0 {
			t.Fatalf("agent tool call streamed as tool_calls: %s", r.Body)
		}
	}
	for _, want := range []string{"Calling search_media", "Calling get_trending", "search_media → ", "get_trending → "} {
		if !strings.Contains(s.reasoning, want) {
			t.Fatalf("reasoning %q lacks %q", s.reasoning, want)
		}
	}
	if s.finish != "stop" || !strings.HasPrefix(s.content, "Dune is not requested") {
		t.Fatalf("summary = %+v", s)
	}
	m := e.llm.Requests()[1].Messages
	if n := len(m); n != 5 || m[3].ToolCallID != "call_a" || m[4].ToolCallID != "call_b" || m[3].Content == "" || m[4].Content == "" {
		t.Fatalf("second prompt = %+v", m)
	}
}

// TestSingleUserMode: without a JWT secret the /v1 routes need no key.
func TestSingleUserMode(t *testing.T) {
	e := newEnv(t, envOptions{singleUser: true})
	e.llm.Enqueue(llmtest.Reply{Text: "local answer"})
	r := e.api.Do(http.MethodPost, "/v1/chat/sync", "", map[string]any{"message": "hi"})
	var got openaiwire.SyncResponse
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Response != "local answer" || got.AgentID != "naked" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
