package gateway_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// checkFuzzAnswer fails on a 5xx, on an error that is not OpenAI-shaped
// and on a stream that does not end with [DONE].
func checkFuzzAnswer(t *testing.T, body string, status int, header http.Header, resp []byte) {
	t.Helper()
	switch {
	case status >= 500:
		t.Fatalf("body %q: %d %s", body, status, resp)
	case status >= 400:
		var e openAIError
		if err := json.Unmarshal(resp, &e); err != nil || e.Error == nil || e.Error.Message == "" {
			t.Fatalf("body %q: %d with a non-OpenAI error %s", body, status, resp)
		}
	case header.Get("Content-Type") == "text/event-stream":
		if !bytes.HasSuffix(resp, []byte("data: [DONE]\n\n")) || bytes.Contains(resp, []byte(`"error"`)) {
			t.Fatalf("body %q: stream %s", body, resp)
		}
	case status != http.StatusOK || !json.Valid(resp):
		t.Fatalf("body %q: %d %s", body, status, resp)
	}
}

func FuzzChatCompletionsBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"naked","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"media-agent","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"system","content":"title"}],"max_tokens":16,"model":"gpt-3.5-turbo"}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`,
		`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto"}`,
		`{"messages":[{"role":"user","content":"x"}],"stop":["a","b"],"temperature":2,"max_completion_tokens":1,"n":1}`,
		`{"messages":[{"role":"user","content":"x"}],"stop":null,"temperature":null,"unknown":{"deep":[1,2]}}`,
		`{"messages":[]}`, `{}`, `[]`, `null`, `"x"`, `{"messages":[{"role":"user","content":"x"}],"max_tokens":1e99}`,
		`{"messages":[{"role":"user","content":"\u0000\ud800"}]}`, `{"messages":[{"role":"developer","content":[]}]}`,
	} {
		f.Add(s)
	}
	e := newEnv(f, envOptions{})
	authz := e.bearer()
	f.Fuzz(func(t *testing.T, body string) {
		r := e.api.DoT(t, http.MethodPost, "/v1/chat/completions", authz, body)
		checkFuzzAnswer(t, body, r.Status, r.Header, r.Body)
	})
}

func FuzzChatBody(f *testing.F) {
	for _, s := range []string{
		`{"agent_id":"naked","message":"hi"}`,
		`{"model":"media-agent","message":"hi","temperature":0.5,"max_tokens":10,"stop":"x"}`,
		`{"messages":[{"role":"user","content":"hi"}],"message":"again"}`,
		`{"message":""}`, `{"message":null}`, `{"message":5}`, `{}`, `[]`, `{"messages":[{"role":"tool"}]}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	e := newEnv(f, envOptions{})
	authz := e.bearer()
	f.Fuzz(func(t *testing.T, body string, sync bool) {
		path := "/v1/chat"
		if sync {
			path = "/v1/chat/sync"
		}
		r := e.api.DoT(t, http.MethodPost, path, authz, body)
		checkFuzzAnswer(t, body, r.Status, r.Header, r.Body)
	})
}
