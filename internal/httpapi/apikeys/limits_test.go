package apikeys_test

import (
	"context"
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
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agentchat.db"), sqlite.WithLimits(store.Limits{APIKeysPerUser: 2}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
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
