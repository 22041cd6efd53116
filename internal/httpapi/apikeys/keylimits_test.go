package apikeys_test

import (
	"net/http"
	"testing"

	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/httpapi/apitest"
)

func TestKeyLimitsCreateAndPatch(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	k := create(t, e, "alice", map[string]any{"name": "webui", "max_parallel": 30, "rpm": 5})
	if k.MaxParallel == nil || *k.MaxParallel != 30 || k.RPM == nil || *k.RPM != 5 || k.TPM != nil {
		t.Fatalf("created %+v", k)
	}
	path := "/v3/access/users/alice/api-keys/" + k.ID
	r := e.As("alice", http.MethodPatch, path, map[string]any{"rpm": nil, "tpm": 1000})
	if r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	var got apikeys.Key
	r.JSON(t, &got)
	if got.MaxParallel == nil || *got.MaxParallel != 30 || got.RPM != nil || got.TPM == nil || *got.TPM != 1000 {
		t.Fatalf("patched %s", r.Body)
	}
	keys, _ := list(t, e, "Bearer "+e.Token("alice"))
	if len(keys) != 1 || keys[0].TPM == nil || *keys[0].TPM != 1000 {
		t.Fatalf("listed %+v", keys)
	}

	for _, body := range []map[string]any{{"rpm": -1}, {"rpm": 1.5}, {"max_parallel": 1001}, {"tpm": "10"}, {"other": 1}} {
		if r := e.As("alice", http.MethodPatch, path, body); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%v: %d %s", body, r.Status, r.Body)
		}
	}
	if r := e.As("alice", http.MethodPatch, "/v3/access/users/alice/api-keys/00000000-0000-4000-8000-000000000000", map[string]any{"rpm": 1}); r.Status != http.StatusNotFound {
		t.Fatalf("unknown key: %d", r.Status)
	}
	if r := e.As("bob", http.MethodPatch, "/v3/access/users/me/api-keys/"+k.ID, map[string]any{"rpm": 1}); r.Status != http.StatusNotFound {
		t.Fatalf("another user's key: %d %s", r.Status, r.Body)
	}
	if r := e.As("alice", http.MethodPost, "/v3/access/users/alice/api-keys", map[string]any{"rpm": 0.5}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("create with bad rpm: %d", r.Status)
	}

	// The key itself may lower its limits, never raise or remove them.
	bearer := "Bearer " + k.Key
	if r := e.Do(http.MethodPatch, path, bearer, map[string]any{"max_parallel": 10}); r.Status != http.StatusOK {
		t.Fatalf("key lowers: %d %s", r.Status, r.Body)
	}
	for _, body := range []map[string]any{{"max_parallel": 11}, {"max_parallel": nil}, {"tpm": 0}} {
		if r := e.Do(http.MethodPatch, path, bearer, body); r.Status != http.StatusForbidden {
			t.Errorf("key raises %v: %d %s", body, r.Status, r.Body)
		}
	}
}
