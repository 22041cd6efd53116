package llmconfigs_test

import (
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/store"
)

// TestConfigLimit: a user (or a group) at MAX_LLM_CONFIGS_PER_USER
// configurations gets a 409 that says the limit and how to free room.
func TestConfigLimit(t *testing.T) {
	e := newEnv(t, envOptions{adminToken: adminToken, limits: store.Limits{LLMConfigsPerOwner: 2}})
	group := "/v3/access/groups/staff/llm-model-configs"
	owners := []struct {
		name string
		send func(method, path string, body any) *response
		path string
	}{
		{"user", func(method, path string, body any) *response { return e.as(t, "alice", method, path, body) }, mine},
		{"group", func(method, path string, body any) *response { return e.admin(t, method, path, body) }, group},
	}
	for _, o := range owners {
		first := decodeConfig(t, must(t, o.send(http.MethodPost, o.path, nested("one", map[string]any{"api_key": secretKey})), http.StatusCreated))
		must(t, o.send(http.MethodPost, o.path, nested("two", nil)), http.StatusCreated)
		r := must(t, o.send(http.MethodPost, o.path, withDefault(nested("three", nil))), http.StatusConflict)
		if msg := r.message(); !strings.Contains(msg, "Limit reached") || !strings.Contains(msg, "at most 2 LLM model configurations") || !strings.Contains(msg, "Delete one") {
			t.Fatalf("%s: message %q does not say the limit and how to free room", o.name, msg)
		}
		must(t, o.send(http.MethodDelete, o.path+"/"+first.ConfigID, nil), http.StatusNoContent)
		must(t, o.send(http.MethodPost, o.path, nested("three", nil)), http.StatusCreated)
	}
	// bob has his own room.
	must(t, e.as(t, "bob", http.MethodPost, mine, nested("one", nil)), http.StatusCreated)
	e.scan(t, secretKey)
}
