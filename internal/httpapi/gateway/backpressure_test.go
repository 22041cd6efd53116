package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/apitest"
)

// TestTurnsPerUserCap: a user runs at most agent.DefaultMaxTurnsPerUser
// requests at once; one more is a 429 OpenAI error with Retry-After on
// every route (streamed or not), another user is not affected, and a
// request is let in again as soon as one ended.
func TestTurnsPerUserCap(t *testing.T) {
	e := newEnv(t, envOptions{})
	g := apitest.NewLLMGate(t, e.llm)
	const limit = agent.DefaultMaxTurnsPerUser
	// A /v1 stream answers its headers with its first chunk: the held
	// requests are sent from goroutines.
	held := make([]chan heldResult, limit)
	for i := range limit {
		held[i] = e.send(t, "alice", "/v1/chat/completions", map[string]any{
			"model": "naked", "stream": true, "messages": []any{userMsg(fmt.Sprintf("hold %d", i))},
		})
	}
	g.WaitHeld(t, limit)

	msgs := []any{userMsg("one more")}
	tests := []struct {
		name, path string
		body       map[string]any
	}{
		{"completions streamed", "/v1/chat/completions", map[string]any{"model": "naked", "stream": true, "messages": msgs}},
		{"completions", "/v1/chat/completions", map[string]any{"model": "naked", "messages": msgs}},
		{"chat", "/v1/chat", map[string]any{"agent_id": "naked", "message": "one more"}},
		{"chat sync", "/v1/chat/sync", map[string]any{"agent_id": "naked", "message": "one more"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(tc.path, tc.body)
			body := checkError(t, r, http.StatusTooManyRequests, "rate_limit_error")
			if body.Error.Message != agent.TooManyTurnsMessage(limit) || body.Error.Code == nil || *body.Error.Code != "too_many_concurrent_requests" {
				t.Errorf("error = %+v, want the cap's message and code", *body.Error)
			}
			if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 || n > int(agent.DefaultLeaseTTL.Seconds()) {
				t.Errorf("Retry-After = %q, want a positive integer of at most the lease TTL", r.Header.Get("Retry-After"))
			}
			if r.Header.Get("X-Should-Retry") != "" {
				t.Errorf("X-Should-Retry = %q: nothing ran, the SDKs may retry", r.Header.Get("X-Should-Retry"))
			}
		})
	}
	t.Run("another user", func(t *testing.T) {
		r := e.api.Do(http.MethodPost, "/v1/chat/completions", "Bearer "+e.api.Token("bob"), map[string]any{"model": "naked", "messages": msgs})
		if r.Status != http.StatusOK {
			t.Fatalf("bob: %d %s", r.Status, r.Body)
		}
	})

	// One request ends ([DONE] read): the next one is let in.
	g.Release(5)
	res := <-held[5]
	if res.err != nil || res.status != http.StatusOK {
		t.Fatalf("released request: %d %v", res.status, res.err)
	}
	if s := parseCompletionStream(t, res.body); s.errorMsg != "" || s.finish != "stop" {
		t.Fatalf("released request: %+v", s)
	}
	if r := e.post("/v1/chat/completions", map[string]any{"model": "naked", "messages": msgs}); r.Status != http.StatusOK {
		t.Fatalf("request after one ended: %d %s", r.Status, r.Body)
	}
	// And only one.
	last := e.send(t, "alice", "/v1/chat", map[string]any{"agent_id": "naked", "message": "hold 100"})
	g.WaitHeld(t, 1)
	checkError(t, e.post("/v1/chat/sync", map[string]any{"agent_id": "naked", "message": "too many again"}), http.StatusTooManyRequests, "rate_limit_error")
	g.Release(100)
	if res := <-last; res.err != nil || res.status != http.StatusOK {
		t.Fatalf("last held request: %d %v", res.status, res.err)
	}
}

// heldResult is the answer to a request sent by send.
type heldResult struct {
	status int
	body   []byte
	err    error
}

// send posts body to path as user from a goroutine and delivers the whole
// answer on the returned channel. The request is cancelled when the test
// ends.
func (e *env) send(t *testing.T, user, path string, body any) chan heldResult {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.api.Server.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.api.Token(user))
	out := make(chan heldResult, 1)
	go func() {
		resp, err := e.api.Server.Client().Do(req)
		if err != nil {
			out <- heldResult{err: err}
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		out <- heldResult{status: resp.StatusCode, body: data, err: err}
	}()
	return out
}
