package chat_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/store"

	"github.com/google/uuid"
)

// openKeyStream POSTs a streamed turn with the Authorization header authz
// and returns its status once the headers came; the response is closed
// when the test ends.
func openKeyStream(t *testing.T, e *env, authz, message string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Server.URL+path("/stream"), strings.NewReader(fmt.Sprintf(`{"message":%q}`, message)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authz)
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode == http.StatusOK {
		// The turn started: its first event is out.
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// TestKeyMaxParallel: the project chat turns of an API key with its own
// max_parallel run beyond the user's cap (MAX_TURNS_PER_USER, 8 by
// default) up to the key's; the next one is refused with 429 naming the
// key's cap.
func TestKeyMaxParallel(t *testing.T) {
	e := newEnv(t, 0)
	g := apitest.NewLLMGate(t, e.llm)
	const n = agent.DefaultMaxTurnsPerUser + 2
	secret, prefix, hash, err := auth.GenerateAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateAPIKey(context.Background(), &store.APIKey{ID: uuid.NewString(), UserID: "alice", Name: "app",
		Hash: hash, Prefix: prefix, Limits: store.KeyLimits{MaxParallel: n}}); err != nil {
		t.Fatal(err)
	}
	key := "Bearer " + secret
	for i := range n {
		if st := openKeyStream(t, e, key, fmt.Sprintf("hold %d", i)); st != http.StatusOK {
			t.Fatalf("turn %d of the key: %d", i+1, st)
		}
	}
	g.WaitHeld(t, n)
	r := e.Do(http.MethodPost, path("/stream"), key, map[string]any{"message": "one more", "stream": false})
	if want := agent.TooManyTurnsMessage(n); r.Status != http.StatusTooManyRequests || r.Message() != want {
		t.Fatalf("turn %d: %d %s, want 429 %q", n+1, r.Status, r.Body, want)
	}
	retryAfter(t, r.Header, int(agent.DefaultLeaseTTL.Seconds()))
	// The user's own slots are apart.
	if r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "mine", "stream": false}); r.Status != http.StatusOK {
		t.Fatalf("alice's own turn: %d %s", r.Status, r.Body)
	}
	g.ReleaseAll()
}
