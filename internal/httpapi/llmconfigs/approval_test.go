package llmconfigs_test

import (
	"net/http"
	"testing"
)

// TestApprovalPolicyKey: config.approval is an extra key with its own
// values, normalized, kept across a partial update.
func TestApprovalPolicyKey(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPost, mine,
		`{"name":"n","config":{"provider":"openai","model":"m","context_limit":8,"approval":" Changes "}}`), http.StatusCreated))
	if c.Config["approval"] != "changes" {
		t.Fatalf("config.approval stored as %v, want changes", c.Config["approval"])
	}
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, `{"config":{"model":"m2"}}`), http.StatusOK))
	if u.Config["approval"] != "changes" {
		t.Fatalf("a partial update lost config.approval: %v", u.Config)
	}
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, `{"config":{"approval":"later"}}`), http.StatusUnprocessableEntity)
}
