package apikeys_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// TestKeyLimit: a user at MAX_API_KEYS_PER_USER active keys gets a 409
// that says the limit and how to free room; revoking a key frees it.
func TestKeyLimit(t *testing.T) {
	st := limitedStore(t, 2)
	e := newEnv(t, apitest.Options{Store: st}, apikeys.Options{})
	first := create(t, e, "alice", map[string]any{"name": "one"})
	create(t, e, "alice", map[string]any{"name": "two"})

	r := e.As("alice", http.MethodPost, "/v3/access/users/alice/api-keys", map[string]any{"name": "three"})
	if r.Status != http.StatusConflict {
		t.Fatalf("third key: %d %s, want 409", r.Status, r.Body)
	}
	var body struct {
		Message string `json:"message"`
	}
	r.JSON(t, &body)
	if !strings.Contains(body.Message, "Limit reached") || !strings.Contains(body.Message, "2 active API keys") || !strings.Contains(body.Message, "Revoke one") {
		t.Fatalf("message %q does not say the limit and how to free room", body.Message)
	}
	if keys, _ := st.ListAPIKeys(context.Background(), "alice"); len(keys) != 2 {
		t.Fatalf("%d keys stored after a refusal", len(keys))
	}
	// Another user is not concerned; a revoked key frees room.
	create(t, e, "bob", map[string]any{"name": "one"})
	if r := e.As("alice", http.MethodDelete, "/v3/access/users/alice/api-keys/"+first.ID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	create(t, e, "alice", map[string]any{"name": "three"})
}

// limitedStore is an SQLite store that lets a user have n active API keys
// (MAX_API_KEYS_PER_USER).
func limitedStore(t *testing.T, n int) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agentchat.db"), sqlite.WithLimits(store.Limits{APIKeysPerUser: n}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestKeyLimitIsTheStores: the store's limit (MAX_API_KEYS_PER_USER,
// configurable) is the only one: with a limit of 60, a user creates 60
// keys (the handlers used to stop at 50 of their own), and the 61st is
// the store's 409.
func TestKeyLimitIsTheStores(t *testing.T) {
	const n = 60
	e := newEnv(t, apitest.Options{Store: limitedStore(t, n)}, apikeys.Options{})
	for i := range n {
		if r := e.As("alice", http.MethodPost, "/v3/access/users/alice/api-keys", map[string]any{"name": fmt.Sprint("key ", i)}); r.Status != http.StatusCreated {
			t.Fatalf("key %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := e.As("alice", http.MethodPost, "/v3/access/users/alice/api-keys", map[string]any{"name": "one more"})
	if r.Status != http.StatusConflict || !strings.Contains(r.Message(), fmt.Sprint(n, " active API keys")) {
		t.Fatalf("key %d: %d %s, want the store's 409", n+1, r.Status, r.Body)
	}
}
