package apikeys_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/store"
)

const keysPath = "/v3/access/users/me/api-keys"

func newEnv(t testing.TB, opt apitest.Options, o apikeys.Options) *apitest.Env {
	return apitest.New(t, opt, func(st store.Store, _ *auth.Authenticator) []httpapi.Route {
		return apikeys.New(st, o).Routes()
	})
}

func create(t *testing.T, e *apitest.Env, user string, body any) apikeys.KeyCreated {
	t.Helper()
	r := e.As(user, http.MethodPost, "/v3/access/users/"+user+"/api-keys", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Fatal("creation answer may be cached")
	}
	var k apikeys.KeyCreated
	r.JSON(t, &k)
	return k
}

func list(t *testing.T, e *apitest.Env, authz string) ([]apikeys.Key, string) {
	t.Helper()
	r := e.Do(http.MethodGet, keysPath, authz, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var keys []apikeys.Key
	r.JSON(t, &keys)
	return keys, string(r.Body)
}

func TestCreateListRevoke(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	before := time.Now().UTC()
	k := create(t, e, "alice", map[string]any{"name": "  Open WebUI  ", "expires_in_days": 30})
	if k.Name != "Open WebUI" || !strings.HasPrefix(k.Key, auth.APIKeyPrefix) || len(k.Key) != auth.APIKeyLen ||
		k.Prefix != k.Key[:auth.APIKeyDisplayLen] || k.ID == "" || k.ExpiresAt == nil {
		t.Fatalf("created = %+v", k)
	}
	exp, err := time.Parse(time.RFC3339, *k.ExpiresAt)
	if err != nil || exp.Before(before.Add(30*24*time.Hour-time.Second)) || exp.After(time.Now().Add(30*24*time.Hour+time.Second)) {
		t.Fatalf("expires_at = %s (%v)", *k.ExpiresAt, err)
	}
	if !strings.HasSuffix(k.CreatedAt, "+00:00") {
		t.Fatalf("created_at = %s", k.CreatedAt)
	}

	// Stored as a hash only.
	stored, err := e.Store.ListAPIKeys(context.Background(), "alice")
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored = %+v %v", stored, err)
	}
	s := stored[0]
	if s.Hash != auth.HashAPIKey(k.Key) || s.Prefix != k.Prefix || s.UserID != "alice" || strings.Contains(s.Name+s.Prefix+s.Hash, k.Key) {
		t.Fatalf("stored key = %+v", s)
	}

	// The key authenticates, for its owner; listing never shows secrets.
	noExp := create(t, e, "alice", nil)
	if noExp.Name != apikeys.DefaultName || noExp.ExpiresAt != nil {
		t.Fatalf("defaults = %+v", noExp)
	}
	keys, raw := list(t, e, "Bearer "+k.Key)
	if len(keys) != 2 || strings.Contains(raw, k.Key) || strings.Contains(raw, noExp.Key) || strings.Contains(raw, `"key"`) || strings.Contains(raw, s.Hash) {
		t.Fatalf("list = %s", raw)
	}
	if keys[0].ID != noExp.ID || keys[1].ID != k.ID || keys[1].Status != apikeys.StatusActive || keys[1].RevokedAt != nil {
		t.Fatalf("list order/status = %+v", keys)
	}
	if bob, _ := list(t, e, "Bearer "+e.Token("bob")); len(bob) != 0 {
		t.Fatalf("bob sees %+v", bob)
	}

	// Revoke: 204, then the key no longer authenticates.
	if r := e.As("alice", http.MethodDelete, "/v3/access/users/alice/api-keys/"+k.ID, nil); r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	r := e.Do(http.MethodGet, keysPath, "Bearer "+k.Key, nil)
	if r.Status != http.StatusUnauthorized || r.Message() != "Could not validate credentials" {
		t.Fatalf("revoked key: %d %s", r.Status, r.Body)
	}
	keys, _ = list(t, e, "Bearer "+noExp.Key)
	if keys[1].Status != apikeys.StatusRevoked || keys[1].RevokedAt == nil {
		t.Fatalf("after revoke = %+v", keys[1])
	}
	// Revoking again is idempotent; someone else's key is not found.
	if r := e.As("alice", http.MethodDelete, keysPath+"/"+k.ID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("second revoke: %d %s", r.Status, r.Body)
	}
	if r := e.As("bob", http.MethodDelete, keysPath+"/"+noExp.ID, nil); r.Status != http.StatusNotFound || !strings.Contains(r.Message(), "not found") {
		t.Fatalf("bob revokes alice's key: %d %s", r.Status, r.Body)
	}
	if keys, _ := list(t, e, "Bearer "+noExp.Key); len(keys) != 2 {
		t.Fatalf("the other key stopped working: %+v", keys)
	}
}

// TestLastUsed: a successful use of a key shows in the list as
// last_used_at (RFC 3339 UTC), null until then; a refused use does not count.
func TestLastUsed(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	used := create(t, e, "alice", map[string]any{"name": "used"})
	unused := create(t, e, "alice", map[string]any{"name": "unused"})
	jwt := "Bearer " + e.Token("alice")
	lastUsed := func() map[string]*string {
		t.Helper()
		r := e.Do(http.MethodGet, keysPath, jwt, nil)
		var raw []map[string]json.RawMessage
		r.JSON(t, &raw)
		out := map[string]*string{}
		for _, k := range raw {
			v, ok := k["last_used_at"]
			if !ok {
				t.Fatalf("no last_used_at in %s", r.Body)
			}
			var s *string
			if err := json.Unmarshal(v, &s); err != nil {
				t.Fatalf("last_used_at %s: %v", v, err)
			}
			var id string
			_ = json.Unmarshal(k["id"], &id)
			out[id] = s
		}
		return out
	}
	if got := lastUsed(); len(got) != 2 || got[used.ID] != nil || got[unused.ID] != nil {
		t.Fatalf("before any use: %v", got)
	}

	before := time.Now().UTC().Truncate(time.Millisecond)
	if r := e.Do(http.MethodGet, keysPath, "Bearer "+used.Key, nil); r.Status != http.StatusOK {
		t.Fatalf("use the key: %d %s", r.Status, r.Body)
	}
	e.Auth.WaitTouches()
	after := time.Now().UTC()
	got := lastUsed()
	if got[unused.ID] != nil {
		t.Errorf("unused key has last_used_at %s", *got[unused.ID])
	}
	at := got[used.ID]
	if at == nil {
		t.Fatal("used key has no last_used_at")
	}
	when, err := time.Parse(time.RFC3339, *at)
	if err != nil || !strings.HasSuffix(*at, "+00:00") || when.Before(before) || when.After(after) {
		t.Fatalf("last_used_at = %s (%v), want RFC 3339 UTC within [%v, %v]", *at, err, before, after)
	}

	// Revoked: the refused use leaves last_used_at as it was.
	if r := e.As("alice", http.MethodDelete, keysPath+"/"+unused.ID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := e.Do(http.MethodGet, keysPath, "Bearer "+unused.Key, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d %s", r.Status, r.Body)
	}
	e.Auth.WaitTouches()
	if got := lastUsed(); got[unused.ID] != nil || got[used.ID] == nil || *got[used.ID] != *at {
		t.Fatalf("after a refused use: %v", got)
	}
}

func TestExpiredKey(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	secret := e.StoreAPIKey("alice", time.Now().Add(-time.Second))
	r := e.Do(http.MethodGet, keysPath, "Bearer "+secret, nil)
	if r.Status != http.StatusUnauthorized || r.Message() != "Could not validate credentials" {
		t.Fatalf("expired key: %d %s", r.Status, r.Body)
	}
	keys, _ := list(t, e, "Bearer "+e.Token("alice"))
	if len(keys) != 1 || keys[0].Status != apikeys.StatusExpired {
		t.Fatalf("list = %+v", keys)
	}
	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	k := create(t, e, "alice", map[string]any{"expires_at": at.Format(time.RFC3339)})
	if got, err := time.Parse(time.RFC3339, *k.ExpiresAt); err != nil || !got.Equal(at) {
		t.Fatalf("expires_at = %s, want %s", *k.ExpiresAt, at)
	}
}

func TestOwnerAndPermissions(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	k := create(t, e, "alice", map[string]any{"name": "cli"})
	tests := []struct {
		name, method, path, authz string
		body                      any
		status                    int
	}{
		{"other user's list", http.MethodGet, "/v3/access/users/bob/api-keys", "Bearer " + e.Token("alice"), nil, http.StatusForbidden},
		{"other user's create", http.MethodPost, "/v3/access/users/bob/api-keys", "Bearer " + e.Token("alice"), map[string]any{}, http.StatusForbidden},
		{"other user's revoke", http.MethodDelete, "/v3/access/users/bob/api-keys/" + k.ID, "Bearer " + e.Token("alice"), nil, http.StatusForbidden},
		{"other user's revoke all", http.MethodDelete, "/v3/access/users/bob/api-keys", "Bearer " + e.Token("alice"), nil, http.StatusForbidden},
		{"no credentials", http.MethodGet, keysPath, "", nil, http.StatusUnauthorized},
		{"key creates key", http.MethodPost, keysPath, "Bearer " + k.Key, map[string]any{}, http.StatusForbidden},
		{"own id", http.MethodGet, "/v3/access/users/alice/api-keys", "Bearer " + k.Key, nil, http.StatusOK},
		{"bad key id", http.MethodDelete, keysPath + "/not-a-uuid", "Bearer " + e.Token("alice"), nil, http.StatusUnprocessableEntity},
		{"unknown key id", http.MethodDelete, keysPath + "/00000000-0000-4000-8000-000000000000", "Bearer " + e.Token("alice"), nil, http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(tc.method, tc.path, tc.authz, tc.body)
			if r.Status != tc.status || (tc.status >= 400 && r.Message() == "") {
				t.Fatalf("got %d %s, want %d", r.Status, r.Body, tc.status)
			}
		})
	}
}

func TestCreateValidation(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	far := time.Now().Add(4000 * 24 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"blank name", map[string]any{"name": "   "}, 422, "Field 'name' must not be blank"},
		{"long name", map[string]any{"name": strings.Repeat("é", 101)}, 422, "at most 100 characters"},
		{"control name", map[string]any{"name": "a\nb"}, 422, "control characters"},
		{"zero days", map[string]any{"expires_in_days": 0}, 422, "expires_in_days"},
		{"too many days", map[string]any{"expires_in_days": 3651}, 422, "expires_in_days"},
		{"fractional days", map[string]any{"expires_in_days": 1.5}, 422, "Field 'expires_in_days' must be an integer"},
		{"fractional days, exponent", `{"expires_in_days":15e-1}`, 422, "Field 'expires_in_days' must be an integer"},
		{"days as a string", map[string]any{"expires_in_days": "30"}, 422, "Field 'expires_in_days' must be an integer"},
		{"days beyond int64", `{"expires_in_days":1e300}`, 422, "must be between 1 and 3650"},
		{"days below int64", `{"expires_in_days":-1e300}`, 422, "must be between 1 and 3650"},
		{"days nearly whole", `{"expires_in_days":30.000000000000000000000000001}`, 422, "must be an integer"},
		{"days as a boolean", `{"expires_in_days":true}`, 422, "must be an integer"},
		{"both", map[string]any{"expires_in_days": 1, "expires_at": far}, 422, "not both"},
		{"past", map[string]any{"expires_at": past}, 422, "in the future"},
		{"far", map[string]any{"expires_at": far}, 422, "within 3650 days"},
		{"bad time", map[string]any{"expires_at": "tomorrow"}, 422, "RFC 3339"},
		{"unknown field", map[string]any{"scope": "all"}, 422, "Unknown field 'scope'"},
		{"wrong type", map[string]any{"name": 5}, 422, "Field 'name' must be of type string"},
		{"malformed", `{"name":`, 400, "Malformed JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.As("alice", http.MethodPost, keysPath, tc.body)
			if r.Status != tc.status || !strings.Contains(r.Message(), tc.msg) {
				t.Fatalf("got %d %s, want %d %q", r.Status, r.Body, tc.status, tc.msg)
			}
		})
	}
	if keys, _ := e.Store.ListAPIKeys(context.Background(), "alice"); len(keys) != 0 {
		t.Fatalf("invalid requests stored %d keys", len(keys))
	}
}

func TestRevokeAllAndLimit(t *testing.T) {
	e := newEnv(t, apitest.Options{Store: limitedStore(t, 2)}, apikeys.Options{})
	a := create(t, e, "alice", nil)
	create(t, e, "alice", nil)
	r := e.As("alice", http.MethodPost, keysPath, nil)
	if r.Status != http.StatusConflict || !strings.Contains(r.Message(), "Revoke one") {
		t.Fatalf("third key: %d %s", r.Status, r.Body)
	}
	if r := e.As("alice", http.MethodDelete, keysPath+"/"+a.ID, nil); r.Status != http.StatusNoContent {
		t.Fatal(r.Status)
	}
	create(t, e, "alice", nil) // room again
	bobKey := create(t, e, "bob", nil)

	r = e.As("alice", http.MethodDelete, keysPath, nil)
	var out apikeys.RevokedAll
	r.JSON(t, &out)
	if r.Status != http.StatusOK || out.Revoked != 2 {
		t.Fatalf("revoke all: %d %s", r.Status, r.Body)
	}
	keys, _ := list(t, e, "Bearer "+e.Token("alice"))
	for _, k := range keys {
		if k.Status != apikeys.StatusRevoked {
			t.Fatalf("key left active: %+v", k)
		}
	}
	if r := e.Do(http.MethodGet, keysPath, "Bearer "+bobKey.Key, nil); r.Status != http.StatusOK {
		t.Fatalf("bob's key revoked by alice: %d", r.Status)
	}
}

// TestSingleUser: the local user manages keys without credentials.
func TestSingleUser(t *testing.T) {
	e := newEnv(t, apitest.Options{SingleUser: true}, apikeys.Options{})
	r := e.Do(http.MethodPost, "/v3/access/users/local/api-keys", "", map[string]any{"name": "x"})
	if r.Status != http.StatusCreated {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r = e.Do(http.MethodGet, keysPath, "", nil)
	var keys []apikeys.Key
	if err := json.Unmarshal(r.Body, &keys); err != nil || len(keys) != 1 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func FuzzAPIKeyBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"x"}`, `{"name":"x","expires_in_days":30}`, `{"expires_at":"2030-01-01T00:00:00Z"}`,
		`{"expires_in_days":-1}`, `{"expires_in_days":1e300}`, `{"name":null}`, `[]`, `null`, ``, `{"name":"\u0000"}`, `{"expires_at":"9999-12-31T23:59:59Z"}`} {
		f.Add(s)
	}
	e := newEnv(f, apitest.Options{SingleUser: true}, apikeys.Options{})
	f.Fuzz(func(t *testing.T, body string) {
		r := e.DoT(t, http.MethodPost, keysPath, "", body)
		switch {
		case r.Status == http.StatusCreated:
			var k apikeys.KeyCreated
			if err := json.Unmarshal(r.Body, &k); err != nil || !strings.HasPrefix(k.Key, auth.APIKeyPrefix) || k.Name == "" {
				t.Fatalf("body %q: created %s", body, r.Body)
			}
		case r.Status >= 400 && r.Status < 500 && r.Message() != "":
		default:
			t.Fatalf("body %q: %d %s", body, r.Status, r.Body)
		}
	})
}

// TestGNS3UserID: with a GNS3 controller, {user_id} may also be the
// caller's GNS3 user_id (the web UI's), resolved through /users/me.
func TestGNS3UserID(t *testing.T) {
	srv := gns3test.NewServer(t, nil)
	alice := srv.AddUser(gns3test.User{Username: "alice"})
	bob := srv.AddUser(gns3test.User{Username: "bob"})
	c, err := gns3.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, apitest.Options{}, apikeys.Options{Users: userpath.New(c)})
	// One token for every request: the GNS3 user is cached per token, and
	// tokens issued in different seconds differ.
	tok := "Bearer " + e.Token("alice")
	r := e.Do(http.MethodPost, "/v3/access/users/"+alice.UserID+"/api-keys", tok, map[string]any{"name": "via uuid"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var k apikeys.KeyCreated
	r.JSON(t, &k)
	for _, u := range []string{"me", "alice", alice.UserID} {
		r := e.Do(http.MethodGet, "/v3/access/users/"+u+"/api-keys", tok, nil)
		var keys []apikeys.Key
		r.JSON(t, &keys)
		if r.Status != http.StatusOK || len(keys) != 1 || keys[0].ID != k.ID {
			t.Fatalf("%s: %d %s", u, r.Status, r.Body)
		}
	}
	if n := srv.Hits("GET /v3/access/users/me"); n != 1 {
		t.Errorf("%d calls to /users/me, want 1 (cached)", n)
	}
	for _, u := range []string{bob.UserID, "bob"} {
		r := e.Do(http.MethodDelete, "/v3/access/users/"+u+"/api-keys/"+k.ID, tok, nil)
		if r.Status != http.StatusForbidden || r.Message() != "You can only manage your own API keys (use 'me' as the user id)" {
			t.Fatalf("%s: %d %s", u, r.Status, r.Body)
		}
	}
	if r := e.As("bob", http.MethodGet, "/v3/access/users/"+alice.UserID+"/api-keys", nil); r.Status != http.StatusForbidden {
		t.Fatalf("bob with alice's uuid: %d %s", r.Status, r.Body)
	}
}

// TestExpiresInDaysWholeNumbers: expires_in_days is any JSON number whose
// value is a whole number of days; null means no expiry.
func TestExpiresInDaysWholeNumbers(t *testing.T) {
	e := newEnv(t, apitest.Options{}, apikeys.Options{})
	for _, tc := range []struct {
		body string
		days int
	}{{`{"expires_in_days":2}`, 2}, {`{"expires_in_days":2.0}`, 2}, {`{"expires_in_days":2e0}`, 2}, {`{"expires_in_days":null}`, 0}} {
		t.Run(tc.body, func(t *testing.T) {
			before := time.Now().UTC()
			k := create(t, e, "alice", json.RawMessage(tc.body))
			if tc.days == 0 {
				if k.ExpiresAt != nil {
					t.Fatalf("expires_at = %s, want none", *k.ExpiresAt)
				}
				return
			}
			d := time.Duration(tc.days) * 24 * time.Hour
			exp, err := time.Parse(time.RFC3339, *k.ExpiresAt)
			if err != nil || exp.Before(before.Add(d-time.Second)) || exp.After(time.Now().Add(d+time.Second)) {
				t.Fatalf("expires_at = %s (%v)", *k.ExpiresAt, err)
			}
		})
	}
}
