package chat_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/apitest"
)

// retryAfter returns the Retry-After header h as whole seconds,
// failing unless it is a positive integer of at most max.
func retryAfter(t *testing.T, h http.Header, max int) int {
	t.Helper()
	v := h.Get("Retry-After")
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		t.Fatalf("Retry-After = %q, want a positive integer of at most %d", v, max)
	}
	return n
}

// TestBusySessionRetryAfter: a second turn on a session that is still
// answering gets 409 with the usual message and a Retry-After within the
// lease's lifetime.
func TestBusySessionRetryAfter(t *testing.T) {
	e := newEnv(t, 0)
	g := apitest.NewLLMGate(t, e.llm)
	sid := "6c5b4a39-2817-4f6e-9d5c-4b3a29180f7e"
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hold 1", "session_id": sid})
	if s.Status != http.StatusOK {
		t.Fatalf("first turn: %d", s.Status)
	}
	g.WaitHeld(t, 1)
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "meanwhile", "session_id": sid, "stream": stream})
			if r.Status != http.StatusConflict || r.Message() != "A response is already being generated in this session. Wait for it to finish or abort it." {
				t.Fatalf("second turn: %d %s", r.Status, r.Body)
			}
			retryAfter(t, r.Header, int(agent.DefaultLeaseTTL/time.Second))
		})
	}
	g.Release(1)
	if got := types(s.All(t)); !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("first turn: %s", got)
	}
	// Free again.
	if r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "now", "session_id": sid, "stream": false}); r.Status != http.StatusOK {
		t.Fatalf("turn after the first ended: %d %s", r.Status, r.Body)
	}
}

// TestTurnsPerUserCap: a user runs at most agent.DefaultMaxTurnsPerUser
// turns at once; the next one is 429 with Retry-After and a clear message,
// another user is not affected, and a slot is free again as soon as a
// turn ended.
func TestTurnsPerUserCap(t *testing.T) {
	e := newEnv(t, 0)
	g := apitest.NewLLMGate(t, e.llm)
	const limit = agent.DefaultMaxTurnsPerUser
	streams := make([]*apitest.Stream, limit)
	for i := range limit {
		streams[i] = e.OpenStream("alice", path("/stream"), map[string]any{"message": fmt.Sprintf("hold %d", i)})
		if streams[i].Status != http.StatusOK {
			t.Fatalf("turn %d: %d %s", i+1, streams[i].Status, streams[i].Body(t))
		}
	}
	g.WaitHeld(t, limit)

	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("one more, stream=%v", stream), func(t *testing.T) {
			r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "one more", "stream": stream})
			want := agent.TooManyTurnsMessage(limit)
			if r.Status != http.StatusTooManyRequests || r.Message() != want {
				t.Fatalf("turn %d: %d %s, want 429 %q", limit+1, r.Status, r.Body, want)
			}
			retryAfter(t, r.Header, int(agent.DefaultLeaseTTL/time.Second))
		})
	}
	t.Run("another user", func(t *testing.T) {
		s := e.OpenStream("bob", path("/stream"), map[string]any{"message": "hi"})
		if got := types(s.All(t)); s.Status != http.StatusOK || !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
			t.Fatalf("bob's turn: %d %s", s.Status, got)
		}
	})

	// One turn ends: the next one runs.
	g.Release(3)
	if got := types(streams[3].All(t)); !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("released turn: %s", got)
	}
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "after one ended"})
	if got := types(s.All(t)); s.Status != http.StatusOK || !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("turn after one ended: %d %s", s.Status, got)
	}
	// That turn ended too: one more slot is free, and only one.
	s = e.OpenStream("alice", path("/stream"), map[string]any{"message": "hold 100"})
	if s.Status != http.StatusOK {
		t.Fatalf("turn %d after one ended: %d", limit, s.Status)
	}
	g.WaitHeld(t, 1)
	if r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "too many again"}); r.Status != http.StatusTooManyRequests {
		t.Fatalf("turn %d again: %d %s", limit+1, r.Status, r.Body)
	}
}
