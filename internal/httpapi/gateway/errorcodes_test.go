package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/llm/llmtest"
)

// errorObject is the error of an HTTP answer or of a stream's error event.
type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (o errorObject) code() string {
	if o.Code == nil {
		return "<null>"
	}
	return *o.Code
}

// streamErrorEvent is the one error event of an SSE body (of either
// streaming route), failing when there is none.
func streamErrorEvent(t *testing.T, r *apitest.Response) errorObject {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d %s, want a stream", r.Status, r.Body)
	}
	data, _ := events(t, r.Body)
	var found []errorObject
	for _, d := range data {
		var ev struct {
			Error *errorObject `json:"error"`
		}
		if json.Unmarshal([]byte(d), &ev) == nil && ev.Error != nil {
			found = append(found, *ev.Error)
		}
	}
	if len(found) != 1 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("want one error event then [DONE]: %s", r.Body)
	}
	return found[0]
}

// TestErrorCodesBeforeAndInsideStream: one failure is reported with the
// same OpenAI type and code whether it happens before the stream started
// (answered with its HTTP status) or inside it (an error event), on both
// streaming routes, and as the non-streamed answer of a late failure.
func TestErrorCodesBeforeAndInsideStream(t *testing.T) {
	const timeout = 400 * time.Millisecond
	e := newEnv(t, envOptions{timeout: timeout})
	tool := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get_trending", Arguments: `{}`}}}
	tests := []struct {
		name   string
		reply  llmtest.Reply
		status int
		typ    string
		code   string
	}{
		{"rate limit", llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, 429, "rate_limit_error", "llm_rate_limit"},
		{"quota", llmtest.Reply{Status: 429, ErrorType: "insufficient_quota", ErrorCode: "insufficient_quota"}, 429, "insufficient_quota", "llm_quota"},
		{"provider 500", llmtest.Reply{Status: 500}, 502, "server_error", "llm_server"},
		{"provider refuses the key", llmtest.Reply{Status: 401}, 502, "server_error", "llm_auth"},
		{"provider refuses the request", llmtest.Reply{Status: 400, Error: "bad"}, 400, "invalid_request_error", "llm_bad_request"},
		{"malformed answer", llmtest.Reply{Malformed: true}, 502, "server_error", "llm_bad_response"},
		{"run deadline", llmtest.Reply{Delay: 3 * timeout, Text: "late"}, 504, "server_error", "gateway_timeout"},
	}
	routes := []struct {
		name string
		path string
		body map[string]any
	}{
		{"completions", "/v1/chat/completions", map[string]any{"model": "media-agent", "stream": true, "messages": []any{userMsg("what's trending?")}}},
		{"chat", "/v1/chat", map[string]any{"agent_id": "media-agent", "message": "what's trending?"}},
	}
	check := func(t *testing.T, how string, got errorObject, typ, code string) {
		t.Helper()
		if got.Type != typ || got.code() != code || got.Message == "" || strings.Contains(got.Message, llmKey) {
			t.Errorf("%s: type %q code %q message %q, want type %q code %q", how, got.Type, got.code(), got.Message, typ, code)
		}
	}
	for _, tt := range tests {
		for _, rt := range routes {
			t.Run(tt.name+"/"+rt.name, func(t *testing.T) {
				// Before the stream: the first LLM call fails.
				e.llm.Enqueue(tt.reply)
				r := e.post(rt.path, rt.body)
				var before openAIError
				if err := json.Unmarshal(r.Body, &before); err != nil || before.Error == nil || r.Status != tt.status {
					t.Fatalf("before the stream: %d %s, want status %d", r.Status, r.Body, tt.status)
				}
				b := errorObject{Message: before.Error.Message, Type: before.Error.Type, Param: before.Error.Param, Code: before.Error.Code}
				check(t, "before the stream", b, tt.typ, tt.code)

				// Inside the stream: the call after an agent tool fails.
				e.llm.Enqueue(tool, tt.reply)
				inside := streamErrorEvent(t, e.post(rt.path, rt.body))
				check(t, "inside the stream", inside, tt.typ, tt.code)
				if inside.Type != b.Type || inside.code() != b.code() {
					t.Errorf("inside the stream %+v, before %+v", inside, b)
				}
			})
		}
		t.Run(tt.name+"/completions not streamed, late", func(t *testing.T) {
			e.llm.Enqueue(tool, tt.reply)
			r := e.post("/v1/chat/completions", map[string]any{"model": "media-agent", "messages": []any{userMsg("what's trending?")}})
			body := checkError(t, r, tt.status, tt.typ)
			if body.Error.Code == nil || *body.Error.Code != tt.code {
				t.Errorf("code %v, want %s: %s", body.Error.Code, tt.code, r.Body)
			}
		})
	}
	// Let the delayed replies of the deadline cases drain.
	if n := e.llm.Pending(); n != 0 {
		t.Fatalf("%d scripted replies left", n)
	}
}
