package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/llm/llmtest"
)

// manualClock is a clock the test moves by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// createKey creates an API key of user through the API (with the user's
// JWT) with the given limits and returns its secret.
func createKey(t *testing.T, api *apitest.Env, user string, limits map[string]any) string {
	t.Helper()
	body := map[string]any{"name": "shared app"}
	for k, v := range limits {
		body[k] = v
	}
	r := api.As(user, http.MethodPost, "/v3/access/users/"+user+"/api-keys", body)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	var k struct {
		Key string `json:"key"`
	}
	r.JSON(t, &k)
	if k.Key == "" {
		t.Fatalf("create key: no secret in %s", r.Body)
	}
	return k.Key
}

// wantRateHeaders checks one trio of rate-limit headers.
func wantRateHeaders(t *testing.T, r *apitest.Response, kind string, limit, remaining int, reset string) {
	t.Helper()
	h := r.Header
	got := [3]string{h.Get("x-ratelimit-limit-" + kind), h.Get("x-ratelimit-remaining-" + kind), h.Get("x-ratelimit-reset-" + kind)}
	want := [3]string{strconv.Itoa(limit), strconv.Itoa(remaining), reset}
	if got != want {
		t.Errorf("x-ratelimit-{limit,remaining,reset}-%s = %q, want %q", kind, got, want)
	}
}

// wantRateLimited checks a refusal by rpm or tpm: 429 rate_limit_error,
// code rate_limit_exceeded, Retry-After the seconds left in the minute.
func wantRateLimited(t *testing.T, r *apitest.Response, retryAfter int) {
	t.Helper()
	body := checkError(t, r, http.StatusTooManyRequests, "rate_limit_error")
	if body.Error.Code == nil || *body.Error.Code != "rate_limit_exceeded" {
		t.Errorf("code = %v, want rate_limit_exceeded", body.Error.Code)
	}
	if got := r.Header.Get("Retry-After"); got != strconv.Itoa(retryAfter) {
		t.Errorf("Retry-After = %q, want %d", got, retryAfter)
	}
}

// TestKeyRPM: a key with rpm 5 makes 5 requests in a minute, on any
// route and on any instance sharing the store; the 6th is refused with
// 429, Retry-After and the rate-limit headers; the next minute lets it in
// again. The same user with a JWT, and another key, are not limited.
func TestKeyRPM(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)}
	a := newEnv(t, envOptions{now: clock.now})
	b := newEnv(t, envOptions{now: clock.now, store: a.api.Store}) // a second instance
	key := "Bearer " + createKey(t, a.api, "alice", map[string]any{"rpm": 5})
	other := "Bearer " + createKey(t, a.api, "alice", nil)

	msgs := []any{userMsg("hello")}
	requests := []struct {
		env  *env
		path string
		body map[string]any
	}{
		{a, "/v1/chat/completions", map[string]any{"model": "naked", "messages": msgs}},
		{b, "/v1/chat/completions", map[string]any{"model": "naked", "stream": true, "messages": msgs}},
		{a, "/v1/chat", map[string]any{"agent_id": "naked", "message": "hello"}},
		{b, "/v1/chat/sync", map[string]any{"agent_id": "naked", "message": "hello"}},
		{a, "/v1/chat/completions", map[string]any{"model": "naked", "messages": msgs}},
	}
	for i, rq := range requests {
		r := rq.env.api.Do(http.MethodPost, rq.path, key, rq.body)
		if r.Status != http.StatusOK {
			t.Fatalf("request %d (%s): %d %s", i+1, rq.path, r.Status, r.Body)
		}
		wantRateHeaders(t, r, "requests", 5, 4-i, "50s")
		if h := r.Header.Get("x-ratelimit-limit-tokens"); h != "" {
			t.Errorf("a key without tpm got x-ratelimit-limit-tokens %q", h)
		}
	}
	sixth := map[string]any{"model": "naked", "messages": msgs}
	for _, e := range []*env{a, b} {
		r := e.api.Do(http.MethodPost, "/v1/chat/completions", key, sixth)
		wantRateLimited(t, r, 50)
		wantRateHeaders(t, r, "requests", 5, 0, "50s")
	}
	// Not the user's limit: the key's.
	if r := a.post("/v1/chat/completions", sixth); r.Status != http.StatusOK || r.Header.Get("x-ratelimit-limit-requests") != "" {
		t.Errorf("alice's JWT: %d, x-ratelimit-limit-requests %q", r.Status, r.Header.Get("x-ratelimit-limit-requests"))
	}
	if r := a.api.Do(http.MethodPost, "/v1/chat/completions", other, sixth); r.Status != http.StatusOK {
		t.Errorf("a key without limits: %d %s", r.Status, r.Body)
	}
	// Later in the same minute: still refused, a shorter wait.
	clock.set(time.Date(2026, 5, 1, 12, 0, 58, 500_000_000, time.UTC))
	r := b.api.Do(http.MethodPost, "/v1/chat/sync", key, map[string]any{"agent_id": "naked", "message": "hello"})
	wantRateLimited(t, r, 2)
	wantRateHeaders(t, r, "requests", 5, 0, "2s")
	// The next minute.
	clock.set(time.Date(2026, 5, 1, 12, 1, 0, 0, time.UTC))
	r = a.api.Do(http.MethodPost, "/v1/chat/completions", key, sixth)
	if r.Status != http.StatusOK {
		t.Fatalf("next minute: %d %s", r.Status, r.Body)
	}
	wantRateHeaders(t, r, "requests", 5, 4, "1m0s")
}

// TestKeyTPM: a key with tpm 100 is let in while the minute's tokens are
// below 100, each run adding the tokens it used (on whichever instance);
// once they reach it, requests are refused until the next minute.
func TestKeyTPM(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 5, 1, 12, 0, 45, 0, time.UTC)}
	a := newEnv(t, envOptions{now: clock.now})
	b := newEnv(t, envOptions{now: clock.now, store: a.api.Store})
	key := "Bearer " + createKey(t, a.api, "alice", map[string]any{"tpm": 100, "rpm": 50})
	reply := llmtest.Reply{Text: "fine", Usage: &llmtest.Usage{PromptTokens: 50, CompletionTokens: 20}}
	body := map[string]any{"model": "naked", "messages": []any{userMsg("hello")}}

	a.llm.Enqueue(reply)
	r := a.api.Do(http.MethodPost, "/v1/chat/completions", key, body)
	if r.Status != http.StatusOK {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	wantRateHeaders(t, r, "tokens", 100, 100, "15s")
	wantRateHeaders(t, r, "requests", 50, 49, "15s")

	b.llm.Enqueue(reply)
	r = b.api.Do(http.MethodPost, "/v1/chat/completions", key, map[string]any{"model": "naked", "stream": true, "messages": []any{userMsg("hello")}})
	if r.Status != http.StatusOK {
		t.Fatalf("second: %d %s", r.Status, r.Body)
	}
	wantRateHeaders(t, r, "tokens", 100, 30, "15s")

	// 140 tokens spent: refused, on both instances and every route.
	for _, e := range []*env{a, b} {
		r = e.api.Do(http.MethodPost, "/v1/chat/sync", key, map[string]any{"agent_id": "naked", "message": "hello"})
		wantRateLimited(t, r, 15)
		wantRateHeaders(t, r, "tokens", 100, 0, "15s")
	}
	if n := a.llm.Pending() + b.llm.Pending(); n != 0 {
		t.Errorf("%d scripted replies left", n)
	}

	clock.set(time.Date(2026, 5, 1, 12, 1, 30, 0, time.UTC))
	a.llm.Enqueue(reply)
	r = a.api.Do(http.MethodPost, "/v1/chat/completions", key, body)
	if r.Status != http.StatusOK {
		t.Fatalf("next minute: %d %s", r.Status, r.Body)
	}
	wantRateHeaders(t, r, "tokens", 100, 100, "30s")
}

// sendAs posts body to path on e with the Authorization header authz from
// a goroutine and delivers the whole answer on the returned channel (the
// request is cancelled when the test ends).
func (e *env) sendAs(t *testing.T, authz, path string, body any) chan heldResult {
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
	req.Header.Set("Authorization", authz)
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

// TestKeyMaxParallel: a key with max_parallel 30, shared by an app for
// many of its users, serves 30 concurrent streams of one user although
// MAX_TURNS_PER_USER is 8 (its default), over two instances sharing the
// store; the 31st request gets 429 rate_limit_error with Retry-After and
// the rate-limit headers; the user's own cap is apart from the key's, and
// a request is let in again once one ended.
func TestKeyMaxParallel(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	a := newEnv(t, envOptions{now: clock.now})
	b := newEnv(t, envOptions{now: clock.now, store: a.api.Store})
	ga, gb := apitest.NewLLMGate(t, a.llm), apitest.NewLLMGate(t, b.llm)
	const n = 30
	key := "Bearer " + createKey(t, a.api, "alice", map[string]any{"max_parallel": n, "rpm": 1000})
	if n <= agent.DefaultMaxTurnsPerUser {
		t.Fatal("the test needs a key cap above the user's")
	}

	held := make([]chan heldResult, n)
	for i := range n {
		e := a
		if i%2 == 1 {
			e = b
		}
		held[i] = e.sendAs(t, key, "/v1/chat/completions", map[string]any{
			"model": "naked", "stream": true, "messages": []any{userMsg(fmt.Sprintf("hold %d", i))},
		})
	}
	ga.WaitHeld(t, n/2)
	gb.WaitHeld(t, n/2)

	for _, tc := range []struct {
		name string
		e    *env
		path string
		body map[string]any
	}{
		{"streamed, instance a", a, "/v1/chat/completions", map[string]any{"model": "naked", "stream": true, "messages": []any{userMsg("one more")}}},
		{"chat sync, instance b", b, "/v1/chat/sync", map[string]any{"agent_id": "naked", "message": "one more"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.e.api.Do(http.MethodPost, tc.path, key, tc.body)
			body := checkError(t, r, http.StatusTooManyRequests, "rate_limit_error")
			if body.Error.Message != gateway.TooManyKeyTurnsMessage(n) {
				t.Errorf("message %q, want the key's cap", body.Error.Message)
			}
			if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > int(agent.DefaultLeaseTTL.Seconds()) {
				t.Errorf("Retry-After = %q, want a positive integer of at most the lease TTL", r.Header.Get("Retry-After"))
			}
			if r.Header.Get("x-ratelimit-limit-requests") != "1000" || r.Header.Get("x-ratelimit-remaining-requests") == "" ||
				r.Header.Get("x-ratelimit-reset-requests") != "1m0s" {
				t.Errorf("rate-limit headers missing: %v", r.Header)
			}
		})
	}
	// The user's own cap (8) is apart: alice's JWT still runs.
	if r := a.post("/v1/chat/completions", map[string]any{"model": "naked", "messages": []any{userMsg("mine")}}); r.Status != http.StatusOK {
		t.Fatalf("alice's own request: %d %s", r.Status, r.Body)
	}

	// One stream ends: the key runs one more.
	ga.Release(0)
	if res := <-held[0]; res.err != nil || res.status != http.StatusOK {
		t.Fatalf("released stream: %d %v", res.status, res.err)
	}
	if r := b.api.Do(http.MethodPost, "/v1/chat/sync", key, map[string]any{"agent_id": "naked", "message": "again"}); r.Status != http.StatusOK {
		t.Fatalf("after one ended: %d %s", r.Status, r.Body)
	}
	ga.ReleaseAll()
	gb.ReleaseAll()
	for i, c := range held[1:] {
		if res := <-c; res.err != nil || res.status != http.StatusOK {
			t.Fatalf("stream %d: %d %v", i+1, res.status, res.err)
		}
	}
}
