package llmconfigs_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
)

// TestKeyNotMovedToAnotherHost is the attack of a stolen session (or ack_
// key): point the configuration at a server of one's own and let the next
// turn send the stored provider key there. An update that moves the
// configuration (base_url or provider) without a new key clears the key.
func TestKeyNotMovedToAnotherHost(t *testing.T) {
	const otherKey = "sk-NEW-key-for-the-new-host-000000zyxw"
	type step struct {
		name string
		body map[string]any
		// wantKey is the key stored after the step ("" none).
		wantKey string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"base_url to another host", []step{{"move", map[string]any{"base_url": "https://evil.example.net/v1"}, ""}}},
		{"base_url flat form with api_key null", []step{{"move", map[string]any{"base_url": "https://evil.example.net/v1", "api_key": nil}, ""}}},
		{"base_url nested form", []step{{"move", map[string]any{"config": map[string]any{"base_url": "https://api.openai.com.evil.example/v1"}}, ""}}},
		{"base_url other port", []step{{"move", map[string]any{"base_url": "https://api.example.com:8443/v1"}, ""}}},
		{"base_url other path", []step{{"move", map[string]any{"base_url": "https://api.example.com/proxy/v1"}, ""}}},
		{"base_url http instead of https", []step{{"move", map[string]any{"base_url": "http://api.example.com/v1"}, ""}}},
		{"base_url back to the provider default", []step{{"move", map[string]any{"base_url": nil}, ""}}},
		{"provider changed", []step{{"move", map[string]any{"provider": "deepseek"}, ""}}},
		{"same base_url kept", []step{{"same", map[string]any{"base_url": "https://api.example.com/v1", "model": "gpt-4.1"}, secretKey}}},
		{"same base_url normalised", []step{{"same", map[string]any{"base_url": "HTTPS://API.Example.COM:443/v1/"}, secretKey}}},
		{"provider case only", []step{{"same", map[string]any{"provider": "OpenAI"}, secretKey}}},
		{"edit without base_url", []step{{"same", map[string]any{"name": "renamed", "temperature": 1.0}, secretKey}}},
		{"new host with a new key", []step{{"move+key", map[string]any{"base_url": "https://other.example.org/v1", "api_key": otherKey}, otherKey}}},
		{"move, then the key stays gone", []step{
			{"move", map[string]any{"base_url": "https://evil.example.net/v1"}, ""},
			{"back", map[string]any{"base_url": "https://api.example.com/v1"}, ""},
		}},
	}
	owners := []struct {
		name  string
		path  string
		owner store.Owner
		send  func(e *env, t *testing.T, method, path string, body any) *response
	}{
		{"user", mine, store.UserOwner("alice"), func(e *env, t *testing.T, method, path string, body any) *response {
			return e.as(t, "alice", method, path, body)
		}},
		{"group", "/v3/access/groups/staff/llm-model-configs", store.GroupOwner("staff"), func(e *env, t *testing.T, method, path string, body any) *response {
			return e.admin(t, method, path, body)
		}},
	}
	for _, o := range owners {
		for _, tc := range tests {
			t.Run(o.name+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t, envOptions{adminToken: adminToken})
				c := decodeConfig(t, must(t, o.send(e, t, http.MethodPost, o.path,
					withDefault(nested("m", map[string]any{"base_url": "https://api.example.com/v1", "api_key": secretKey}))), http.StatusCreated))
				if !c.APIKeySet {
					t.Fatalf("created without key: %+v", c)
				}
				for _, s := range tc.steps {
					u := decodeConfig(t, must(t, o.send(e, t, http.MethodPut, o.path+"/"+c.ConfigID, s.body), http.StatusOK))
					if u.APIKeySet != (s.wantKey != "") {
						t.Fatalf("%s: api_key_set %v, want %v (%+v)", s.name, u.APIKeySet, s.wantKey != "", u)
					}
					if u.Config["api_key"] != nil {
						t.Fatalf("%s: api_key shown: %v", s.name, u.Config["api_key"])
					}
					st, err := e.st.GetLLMConfig(context.Background(), o.owner, c.ConfigID)
					if err != nil {
						t.Fatal(err)
					}
					if s.wantKey == "" {
						if st.APIKeyCipher != "" || st.APIKeyHint != "" {
							t.Fatalf("%s: the stored key survived the move", s.name)
						}
						continue
					}
					got, err := e.box.Open(st.APIKeyCipher, llmconfig.KeyAAD(st.Owner, st.ID))
					if err != nil || got != s.wantKey {
						t.Fatalf("%s: stored key wrong (err %v)", s.name, err)
					}
				}
				// What a turn resolves has no key after a move either.
				if o.owner.UserID != "" {
					eff, _, err := llmconfig.Effective(context.Background(), e.st, llmconfig.NoGroups{}, auth.Identity{UserID: "alice", Via: auth.ViaJWT})
					if err != nil {
						t.Fatal(err)
					}
					last := tc.steps[len(tc.steps)-1]
					if (eff.APIKeyCipher != "") != (last.wantKey != "") {
						t.Fatalf("effective config key set %v, want %v", eff.APIKeyCipher != "", last.wantKey != "")
					}
				}
				e.scan(t, secretKey)
			})
		}
	}
}

// TestKeyMoveWithExpectedVersion checks that the clearing rides on the
// version-conditioned write: a stale expected_version is refused and
// changes nothing, and racing moves and edits never leave the old key on a
// new host.
func TestKeyMoveWithExpectedVersion(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.create(t, "alice", withDefault(nested("m", map[string]any{"base_url": "https://api.example.com/v1", "api_key": secretKey})))
	path := mine + "/" + c.ConfigID
	must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"name": "a", "expected_version": 1}), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"base_url": "https://evil.example.net/v1", "expected_version": 1}), http.StatusConflict)
	st, _ := e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), c.ConfigID)
	if st.APIKeyCipher == "" || st.Config["base_url"] != "https://api.example.com/v1" {
		t.Fatalf("a refused update changed the config: %+v", st.Config)
	}
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"base_url": "https://evil.example.net/v1", "expected_version": 2}), http.StatusOK))
	if u.APIKeySet || u.Version != 3 {
		t.Fatalf("moved %+v", u)
	}

	// Racing edits: whatever order they land in, a config whose base URL
	// is not the one its key was given for has no key.
	must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"base_url": "https://api.example.com/v1", "api_key": secretKey}), http.StatusOK)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			body := map[string]any{"temperature": 0.1 * float64(i)}
			if i%2 == 0 {
				body = map[string]any{"base_url": "https://evil.example.net/v1"}
			}
			must(t, e.as(t, "alice", http.MethodPut, path, body), http.StatusOK)
		})
	}
	wg.Wait()
	st, _ = e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), c.ConfigID)
	if st.Config["base_url"] != "https://evil.example.net/v1" || st.APIKeyCipher != "" {
		t.Fatalf("after the race: base_url %v, key set %v", st.Config["base_url"], st.APIKeyCipher != "")
	}
	e.scan(t, secretKey)
}
