package llmconfigs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi/llmconfigs"
	"agentchat/internal/llmconfig"
	"agentchat/internal/secrets"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

const (
	mine    = "/v3/access/users/me/llm-model-configs"
	ownPath = mine + "/own"
	defPath = mine + "/default"
)

// utcOffset is a time as the web UI reads it: UTC with a numeric offset.
var utcOffset = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$`)

func TestCreateAndRead(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := nested("GPT-4o", map[string]any{"api_key": secretKey, "temperature": 0.2, "max_tokens": 4096,
		"copilot_mode": "lab_automation_assistant", "top_p": 0.9, "headers": map[string]any{"x-team": "lab"}})
	r := must(t, e.as(t, "alice", http.MethodPost, mine, body), http.StatusCreated)
	if !strings.Contains(string(r.body), `"api_key":null`) {
		t.Fatalf("config.api_key is not null: %s", r.body)
	}
	c := decodeConfig(t, r)
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(c.ConfigID) || c.Name != "GPT-4o" || c.ModelType != "text" ||
		c.UserID == nil || *c.UserID != "alice" || c.GroupID != nil || c.IsDefault || c.Version != 1 ||
		!utcOffset.MatchString(c.CreatedAt) || !utcOffset.MatchString(c.UpdatedAt) {
		t.Fatalf("created %+v", c)
	}
	if !c.APIKeySet || c.APIKeyHint != secrets.Hint(secretKey) || !strings.HasSuffix(c.APIKeyHint, "abcd") {
		t.Fatalf("key set %v hint %q", c.APIKeySet, c.APIKeyHint)
	}
	want := map[string]any{
		"provider": "openai", "base_url": "https://api.openai.com/v1", "model": "gpt-4o", "temperature": 0.2,
		"context_limit": 128.0, "max_tokens": 4096.0, "context_strategy": "balanced", "copilot_mode": "lab_automation_assistant",
		"api_key": nil, "top_p": 0.9, "headers": map[string]any{"x-team": "lab"},
	}
	if fmt.Sprint(c.Config) != fmt.Sprint(want) {
		t.Fatalf("config %v\nwant   %v", c.Config, want)
	}

	// Stored sealed, opening with the exported aad only.
	stored, err := e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), c.ConfigID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.APIKeyCipher == "" || strings.Contains(stored.APIKeyCipher, secretKey) || stored.APIKeyHint != c.APIKeyHint {
		t.Fatalf("stored key %q hint %q", stored.APIKeyCipher, stored.APIKeyHint)
	}
	if _, ok := stored.Config["api_key"]; ok {
		t.Fatal("the store got an api_key in config")
	}
	if got, err := e.box.Open(stored.APIKeyCipher, llmconfig.KeyAAD(store.UserOwner("alice"), c.ConfigID)); err != nil || got != secretKey {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := e.box.Open(stored.APIKeyCipher, llmconfig.KeyAAD(store.UserOwner("bob"), c.ConfigID)); !errors.Is(err, secrets.ErrUndecryptable) {
		t.Fatalf("opened under another owner's aad: %v", err)
	}

	// Reads: own, inherited list, default (none yet, then set).
	own := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK))
	if own.Total != 1 || own.Configs[0].ConfigID != c.ConfigID || own.DefaultConfig != nil || own.Configs[0].Source != "" {
		t.Fatalf("own %+v", own)
	}
	all := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK))
	if all.Total != 1 || all.Configs[0].Source != llmconfigs.SourceUser || all.Configs[0].GroupName != nil || all.DefaultConfig != nil {
		t.Fatalf("list %+v", all)
	}
	r = must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusNotFound)
	if r.message() != "No default LLM model configuration found for user 'alice'" {
		t.Fatalf("no default: %s", r.body)
	}
	d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+c.ConfigID, map[string]any{}), http.StatusOK))
	if !d.IsDefault || d.ConfigID != c.ConfigID {
		t.Fatalf("set default %+v", d)
	}
	d = decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK))
	if d.ConfigID != c.ConfigID || !d.IsDefault || d.Source != llmconfigs.SourceUser {
		t.Fatalf("default %+v", d)
	}
	all = decodeList(t, must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK))
	if all.DefaultConfig == nil || all.DefaultConfig.ConfigID != c.ConfigID || !all.Configs[0].IsDefault {
		t.Fatalf("list after default %+v", all)
	}

	// A second one created as the default takes the mark.
	c2 := e.create(t, "alice", map[string]any{"name": "local", "config": map[string]any{"provider": "ollama", "model": "llama3", "context_limit": 8}, "is_default": true})
	if !c2.IsDefault || c2.Config["base_url"] != "http://127.0.0.1:11434/v1" || c2.APIKeySet || c2.APIKeyHint != "" || c2.ModelType != "text" || c2.Config["temperature"] != 0.7 {
		t.Fatalf("second %+v", c2)
	}
	own = decodeList(t, must(t, e.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK))
	if own.Total != 2 || own.DefaultConfig == nil || own.DefaultConfig.ConfigID != c2.ConfigID || own.Configs[0].IsDefault {
		t.Fatalf("own after second %+v", own)
	}

	// Delete: 204, then 404; the default goes with it.
	if r := e.as(t, "alice", http.MethodDelete, mine+"/"+c2.ConfigID, nil); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	r = must(t, e.as(t, "alice", http.MethodDelete, mine+"/"+c2.ConfigID, nil), http.StatusNotFound)
	if r.message() != "LLM model configuration '"+c2.ConfigID+"' not found" {
		t.Fatalf("second delete: %s", r.body)
	}
	must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusNotFound)
	e.scan(t, secretKey)
}

// TestWebUIFlow replays what the GNS3 web UI sends: the dialog's flat
// create body (custom fields at the top level), its edit body without
// api_key, and the chat's mode toggle.
func TestWebUIFlow(t *testing.T) {
	e := newEnv(t, envOptions{})
	create := `{"name":"deepseek-chat","model_type":"text","provider":"deepseek","base_url":"","model":"deepseek-chat",
		"temperature":0.7,"context_limit":64,"context_strategy":"balanced","copilot_mode":"teaching_assistant",
		"is_default":true,"api_key":"` + secretKey + `","reasoning_effort":"low"}`
	c := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPost, mine, create), http.StatusCreated))
	if c.Config["base_url"] != "https://api.deepseek.com/v1" || c.Config["reasoning_effort"] != "low" || !c.IsDefault || !c.APIKeySet {
		t.Fatalf("created %+v", c)
	}
	stored, _ := e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), c.ConfigID)

	edit := `{"name":"deepseek-chat","model_type":"text","provider":"deepseek","base_url":"https://api.deepseek.com/v1","model":"deepseek-reasoner",
		"temperature":0.5,"context_limit":64,"context_strategy":"aggressive","copilot_mode":"teaching_assistant","is_default":true,"reasoning_effort":"high"}`
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, edit), http.StatusOK))
	if u.Version != 2 || u.Config["model"] != "deepseek-reasoner" || u.Config["reasoning_effort"] != "high" || !u.APIKeySet || !u.IsDefault {
		t.Fatalf("edited %+v", u)
	}

	// The mode toggle: only copilot_mode, at the top level.
	m := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, `{"copilot_mode":"lab_automation_assistant"}`), http.StatusOK))
	if m.Version != 3 || m.Config["copilot_mode"] != "lab_automation_assistant" || m.Config["model"] != "deepseek-reasoner" || !m.APIKeySet || m.APIKeyHint != c.APIKeyHint {
		t.Fatalf("toggled %+v", m)
	}
	after, _ := e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), c.ConfigID)
	if after.APIKeyCipher != stored.APIKeyCipher {
		t.Fatal("the mode toggle changed the stored key")
	}
	if got, err := e.box.Open(after.APIKeyCipher, llmconfig.KeyAAD(after.Owner, after.ID)); err != nil || got != secretKey {
		t.Fatalf("key after toggle: %v", err)
	}
	// The chat reads the mode from the list's default_config.
	l := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK))
	if l.DefaultConfig == nil || l.DefaultConfig.Config["copilot_mode"] != "lab_automation_assistant" || l.DefaultConfig.Source != "user" {
		t.Fatalf("list %+v", l)
	}
	e.scan(t, secretKey)
}

func TestUpdateMerge(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.create(t, "alice", nested("m", map[string]any{"api_key": secretKey, "max_tokens": 100, "copilot_mode": "teaching_assistant", "seed": 7, "keep": "yes"}))
	put := func(body any) config {
		t.Helper()
		return decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, body), http.StatusOK))
	}
	// A given key replaces, an omitted key stays, null removes; a
	// configuration read and sent back (api_key: null) keeps its key.
	u := put(map[string]any{"config": map[string]any{"model": "gpt-4.1", "max_tokens": nil, "seed": nil, "temperature": 1.5, "api_key": nil, "new": []any{1, "x"}}})
	if u.Config["model"] != "gpt-4.1" || u.Config["temperature"] != 1.5 || u.Config["keep"] != "yes" || u.Config["copilot_mode"] != "teaching_assistant" ||
		u.Config["context_limit"] != 128.0 || u.Config["provider"] != "openai" || fmt.Sprint(u.Config["new"]) != "[1 x]" || !u.APIKeySet || u.Version != 2 || u.Name != "m" {
		t.Fatalf("merged %+v", u)
	}
	for _, k := range []string{"max_tokens", "seed"} {
		if _, ok := u.Config[k]; ok {
			t.Errorf("%s not removed", k)
		}
	}
	// Top-level fields, then a full read-modify-write of the answer's config.
	u = put(map[string]any{"name": "renamed", "model_type": "multimodal"})
	if u.Name != "renamed" || u.ModelType != "multimodal" || u.Config["model"] != "gpt-4.1" || u.Version != 3 {
		t.Fatalf("renamed %+v", u)
	}
	u = put(map[string]any{"name": u.Name, "model_type": u.ModelType, "config": u.Config, "expected_version": u.Version})
	if !u.APIKeySet || u.Version != 4 {
		t.Fatalf("round trip %+v", u)
	}
	// A new key replaces; "" removes.
	u = put(map[string]any{"api_key": "sk-other-key-000000000000wxyz"})
	if !u.APIKeySet || !strings.HasSuffix(u.APIKeyHint, "wxyz") {
		t.Fatalf("new key %+v", u)
	}
	u = put(map[string]any{"config": map[string]any{"api_key": ""}})
	if u.APIKeySet || u.APIKeyHint != "" {
		t.Fatalf("removed key %+v", u)
	}
	if s, _ := e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), c.ConfigID); s.APIKeyCipher != "" || s.APIKeyHint != "" {
		t.Fatalf("stored after removal %+v", s)
	}
	// A base URL that was the provider's default follows the provider;
	// an explicit one stays; null brings back the default.
	u = put(map[string]any{"provider": "mistral"})
	if u.Config["base_url"] != "https://api.mistral.ai/v1" {
		t.Fatalf("provider change %+v", u.Config)
	}
	u = put(map[string]any{"base_url": "https://proxy.example.com/v1"})
	u = put(map[string]any{"provider": "groq"})
	if u.Config["base_url"] != "https://proxy.example.com/v1" {
		t.Fatalf("explicit base_url lost: %+v", u.Config)
	}
	u = put(map[string]any{"config": map[string]any{"base_url": nil, "temperature": nil, "context_strategy": nil}})
	if u.Config["base_url"] != "https://api.groq.com/openai/v1" || u.Config["temperature"] != 0.7 || u.Config["context_strategy"] != "balanced" {
		t.Fatalf("defaults back %+v", u.Config)
	}
	// An empty body changes nothing but the version.
	v := u.Version
	if u = put(map[string]any{}); u.Version != v+1 || u.Config["model"] != "gpt-4.1" {
		t.Fatalf("empty update %+v", u)
	}
	// A required key cannot go.
	r := must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"config": map[string]any{"model": nil}}), http.StatusUnprocessableEntity)
	if r.message() != "Field 'config.model' is required" {
		t.Fatalf("removing model: %s", r.body)
	}
	// An unknown provider without a base URL is refused.
	r = must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"provider": "aws", "base_url": ""}), http.StatusUnprocessableEntity)
	if !strings.HasPrefix(r.message(), "Field 'base_url' is required for provider 'aws'") {
		t.Fatalf("aws: %s", r.body)
	}
	e.scan(t, secretKey)
}

func TestVersionConflict(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.create(t, "alice", nested("m", nil))
	path := mine + "/" + c.ConfigID
	must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"name": "a", "expected_version": 1}), http.StatusOK)
	r := must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"name": "b", "expected_version": 1}), http.StatusConflict)
	if r.message() != "Concurrent modification detected. Expected version 1, but current version is 2. Please retry." {
		t.Fatalf("409 message %q", r.message())
	}
	if got := decodeList(t, e.as(t, "alice", http.MethodGet, ownPath, nil)).Configs[0]; got.Name != "a" || got.Version != 2 {
		t.Fatalf("after conflict %+v", got)
	}
	// Concurrent updates with the same expected version: one wins.
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.as(t, "alice", http.MethodPut, path, map[string]any{"name": fmt.Sprint("n", i), "expected_version": 2}).status
		})
	}
	wg.Wait()
	slices.Sort(statuses)
	if statuses[len(statuses)-1] != http.StatusConflict || statuses[0] != http.StatusOK || statuses[1] != http.StatusConflict {
		t.Fatalf("statuses %v, want one 200 and 409s", statuses)
	}
	// Without expected_version concurrent partial updates all apply.
	for i := range 8 {
		wg.Go(func() {
			must(t, e.as(t, "alice", http.MethodPut, path, map[string]any{"config": map[string]any{fmt.Sprint("k", i): i}}), http.StatusOK)
		})
	}
	wg.Wait()
	got := decodeList(t, e.as(t, "alice", http.MethodGet, ownPath, nil)).Configs[0]
	for i := range 8 {
		if _, ok := got.Config[fmt.Sprint("k", i)]; !ok {
			t.Errorf("update k%d lost: %v", i, got.Config)
		}
	}
	if got.Version != 3+8 {
		t.Errorf("version %d, want %d", got.Version, 3+8)
	}
}

func TestConcurrentSetDefault(t *testing.T) {
	e := newEnv(t, envOptions{})
	var ids []string
	for i := range 6 {
		ids = append(ids, e.create(t, "alice", nested(fmt.Sprint("c", i), nil)).ConfigID)
	}
	var wg sync.WaitGroup
	for round := range 3 {
		for _, id := range ids {
			wg.Go(func() {
				must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+id, map[string]any{}), http.StatusOK)
			})
		}
		wg.Wait()
		l := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK))
		n := 0
		for _, c := range l.Configs {
			if c.IsDefault {
				n++
			}
		}
		if n != 1 || l.DefaultConfig == nil {
			t.Fatalf("round %d: %d defaults", round, n)
		}
	}
	// An empty body (no JSON at all) is accepted too; a field is not.
	must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+ids[0], nil), http.StatusOK)
	r := must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+ids[0], map[string]any{"x": 1}), http.StatusUnprocessableEntity)
	if !strings.HasPrefix(r.message(), "Unknown field 'x'") {
		t.Fatalf("%s", r.body)
	}
	must(t, e.as(t, "alice", http.MethodPut, mine+"/default/00000000-0000-4000-8000-000000000000", map[string]any{}), http.StatusNotFound)
}

// TestIsolation: Bob can neither read nor change Alice's configurations.
func TestIsolation(t *testing.T) {
	e := newEnv(t, envOptions{})
	alice := e.gns3.AddUser(gns3test.User{Username: "alice"})
	bob := e.gns3.AddUser(gns3test.User{Username: "bob"})
	c := e.create(t, "alice", nested("alice's", map[string]any{"api_key": secretKey}))
	id := c.ConfigID
	tests := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"list by sub", http.MethodGet, "/v3/access/users/alice/llm-model-configs", nil, 403},
		{"list by gns3 id", http.MethodGet, "/v3/access/users/" + alice.UserID + "/llm-model-configs", nil, 403},
		{"own", http.MethodGet, "/v3/access/users/alice/llm-model-configs/own", nil, 403},
		{"default", http.MethodGet, "/v3/access/users/alice/llm-model-configs/default", nil, 403},
		{"create", http.MethodPost, "/v3/access/users/alice/llm-model-configs", nested("x", nil), 403},
		{"update by path", http.MethodPut, "/v3/access/users/alice/llm-model-configs/" + id, map[string]any{"name": "pwned"}, 403},
		{"delete by path", http.MethodDelete, "/v3/access/users/" + alice.UserID + "/llm-model-configs/" + id, nil, 403},
		{"set default by path", http.MethodPut, "/v3/access/users/alice/llm-model-configs/default/" + id, map[string]any{}, 403},
		{"update as me", http.MethodPut, mine + "/" + id, map[string]any{"name": "pwned"}, 404},
		{"delete as me", http.MethodDelete, mine + "/" + id, nil, 404},
		{"set default as me", http.MethodPut, mine + "/default/" + id, map[string]any{}, 404},
		{"own as me", http.MethodGet, ownPath, nil, 200},
		{"own by gns3 id", http.MethodGet, "/v3/access/users/" + bob.UserID + "/llm-model-configs/own", nil, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.as(t, "bob", tc.method, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			switch tc.status {
			case 403:
				// Another user's GNS3 id: the privilege it would take.
				if !strings.HasPrefix(r.message(), "You can only manage your own LLM model configurations (use 'me' as the user id)") {
					t.Fatalf("message %q", r.message())
				}
			case 404:
				if r.message() != "LLM model configuration '"+id+"' not found" {
					t.Fatalf("message %q", r.message())
				}
			case 200:
				if l := decodeList(t, r); l.Total != 0 {
					t.Fatalf("bob sees %+v", l)
				}
			}
		})
	}
	got, err := e.st.GetLLMConfig(context.Background(), store.UserOwner("alice"), id)
	if err != nil || got.Name != "alice's" || got.Version != 1 || got.IsDefault {
		t.Fatalf("alice's config changed: %+v %v", got, err)
	}
	if r := e.do(t, http.MethodGet, mine, "", nil); r.status != http.StatusUnauthorized || r.message() == "" {
		t.Fatalf("no credentials: %d %s", r.status, r.body)
	}
	if r := e.do(t, http.MethodGet, mine, "Bearer not-a-jwt", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("bad token: %d %s", r.status, r.body)
	}
	e.scan(t, secretKey)
}

// TestUserIDResolution: {user_id} is me, the sub, or the caller's GNS3
// user_id (resolved once per token through /v3/access/users/me).
func TestUserIDResolution(t *testing.T) {
	e := newEnv(t, envOptions{})
	alice := e.gns3.AddUser(gns3test.User{Username: "alice"})
	bob := e.gns3.AddUser(gns3test.User{Username: "bob"})
	c := e.create(t, "alice", nested("m", nil))
	tok := "Bearer " + e.token("alice")
	for _, u := range []string{"me", "alice", alice.UserID, strings.ToUpper(alice.UserID)} {
		l := decodeList(t, must(t, e.do(t, http.MethodGet, "/v3/access/users/"+u+"/llm-model-configs", tok, nil), http.StatusOK))
		if l.Total != 1 || l.Configs[0].ConfigID != c.ConfigID {
			t.Fatalf("%s: %+v", u, l)
		}
	}
	must(t, e.do(t, http.MethodPut, "/v3/access/users/"+alice.UserID+"/llm-model-configs/"+c.ConfigID, tok, map[string]any{"name": "via uuid"}), http.StatusOK)
	if n := e.gns3.Hits("GET /v3/access/users/me"); n != 1 {
		t.Errorf("GNS3 /users/me asked %d times for one token, want 1 (cached)", n)
	}
	for _, u := range []string{bob.UserID, "bob", "00000000-0000-4000-8000-000000000000", "ME", "../alice"} {
		r := e.do(t, http.MethodGet, "/v3/access/users/"+u+"/llm-model-configs/own", tok, nil)
		if r.status != http.StatusForbidden && r.status != http.StatusNotFound {
			t.Fatalf("%s: %d %s", u, r.status, r.body)
		}
	}
	// A caller GNS3 does not know cannot use a UUID (403), only me.
	r := e.as(t, "carol", http.MethodGet, "/v3/access/users/"+alice.UserID+"/llm-model-configs", nil)
	if r.status != http.StatusForbidden {
		t.Fatalf("unknown gns3 user: %d %s", r.status, r.body)
	}
	must(t, e.as(t, "carol", http.MethodGet, mine, nil), http.StatusOK)

	// Without GNS3_URL only me and the sub name the caller.
	n := newEnv(t, envOptions{noGNS3: true})
	must(t, n.as(t, "alice", http.MethodGet, "/v3/access/users/alice/llm-model-configs", nil), http.StatusOK)
	must(t, n.as(t, "alice", http.MethodGet, "/v3/access/users/"+alice.UserID+"/llm-model-configs", nil), http.StatusForbidden)

	// A controller that cannot be reached: 502 for a UUID, me still works.
	d := newEnv(t, envOptions{gns3URL: "http://127.0.0.1:1"})
	r = d.as(t, "alice", http.MethodGet, "/v3/access/users/"+alice.UserID+"/llm-model-configs/own", nil)
	if r.status != http.StatusBadGateway || !strings.Contains(r.message(), "use 'me'") {
		t.Fatalf("dead controller: %d %s", r.status, r.body)
	}
	must(t, d.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK)
}

// TestGroups: group routes take ADMIN_TOKEN, or a GNS3 token holding
// Group.Audit (to read) or Group.Modify (to change) on the group; members
// inherit the group's configurations when GNS3 lets them list their
// groups.
func TestGroups(t *testing.T) {
	e := newEnv(t, envOptions{adminToken: adminToken})
	staff := e.gns3.AddGroup("staff", "alice", "bob", "root")
	labs := e.gns3.AddGroup("labs", "alice")
	// Alice may read every group (Group.Audit on /) and change staff's.
	e.gns3.AddUser(gns3test.User{Username: "alice", Privileges: []string{"Group.Audit"},
		ACL: map[string][]string{"/access/groups/" + staff: {"Group.Modify"}}})
	e.gns3.AddUser(gns3test.User{Username: "bob"}) // lacks Group.Audit: GNS3 answers 403
	e.gns3.AddUser(gns3test.User{Username: "root", Superadmin: true})
	gpath := "/v3/access/groups/" + staff + "/llm-model-configs"
	lpath := "/v3/access/groups/" + labs + "/llm-model-configs"

	// Who may manage group configurations: the six calls of the web UI's
	// group tab, on a configuration that does not exist (an allowed call
	// gets past the privilege: 200, 404 or the 422 of an empty body).
	const none = "/00000000-0000-4000-8000-000000000000"
	calls := func(p string) []struct {
		method, path string
		modify       bool
	} {
		return []struct {
			method, path string
			modify       bool
		}{
			{http.MethodGet, p, false}, {http.MethodPost, p, true}, {http.MethodGet, p + "/default", false},
			{http.MethodPut, p + none, true}, {http.MethodDelete, p + none, true}, {http.MethodPut, p + "/default" + none, true},
		}
	}
	alice, bob, root := "Bearer "+e.token("alice"), "Bearer "+e.token("bob"), "Bearer "+e.token("root")
	auths := []struct {
		name, authz, path string
		// status of a read and of a change; 0: allowed
		read, change int
		msg          string
	}{
		{"no credentials", "", gpath, 401, 401, "Not authenticated"},
		{"wrong token", "Bearer " + adminToken + "x", gpath, 401, 401, "Could not validate credentials"},
		{"basic", "Basic " + adminToken, gpath, 401, 401, ""},
		{"admin token", "Bearer " + adminToken, gpath, 0, 0, ""},
		{"alice on staff", alice, gpath, 0, 0, ""},
		{"alice on labs", alice, lpath, 0, 403, "You need the GNS3 privilege Group.Modify on group '" + labs + "' to change its LLM model configurations (ask a GNS3 administrator, or use the administrator token)"},
		{"bob on staff", bob, gpath, 403, 403, "You need the GNS3 privilege Group."},
		{"superadmin", root, lpath, 0, 0, ""},
		{"GNS3 does not know the user", "Bearer " + e.token("carol"), gpath, 403, 403, "The GNS3 controller did not accept your token, so you hold no privilege there (log in to GNS3 again)"},
	}
	for _, a := range auths {
		for _, rt := range calls(a.path) {
			want := a.read
			if rt.modify {
				want = a.change
			}
			r := e.do(t, rt.method, rt.path, a.authz, map[string]any{})
			switch {
			case want == 0 && (r.status == 401 || r.status == 403):
				t.Errorf("%s %s %s: %d %s, want allowed", a.name, rt.method, rt.path, r.status, r.body)
			case want != 0 && (r.status != want || !strings.HasPrefix(r.message(), a.msg)):
				t.Errorf("%s %s %s: %d %s, want %d %q", a.name, rt.method, rt.path, r.status, r.body, want, a.msg)
			}
		}
	}
	r := e.do(t, http.MethodGet, "/v3/access/groups/staff/llm-model-configs", alice, nil)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.message(), "a UUID") {
		t.Fatalf("a group name with a GNS3 token: %d %s", r.status, r.body)
	}
	r = e.do(t, http.MethodGet, gpath, bob, nil)
	if r.message() != "You need the GNS3 privilege Group.Audit on group '"+staff+"' to see its LLM model configurations (ask a GNS3 administrator, or use the administrator token)" {
		t.Fatalf("bob reads: %s", r.body)
	}

	// The admin manages them.
	g := decodeConfig(t, must(t, e.admin(t, http.MethodPost, gpath, nested("team", map[string]any{"api_key": secretKey})), http.StatusCreated))
	if g.GroupID == nil || *g.GroupID != staff || g.UserID != nil || !g.APIKeySet || g.APIKeyHint == "" {
		t.Fatalf("group config %+v", g)
	}
	r = must(t, e.admin(t, http.MethodGet, gpath+"/default", nil), http.StatusNotFound)
	if r.message() != "No default LLM model configuration found for group '"+staff+"'" {
		t.Fatalf("%s", r.body)
	}
	must(t, e.admin(t, http.MethodPut, gpath+"/default/"+g.ConfigID, map[string]any{}), http.StatusOK)
	g = decodeConfig(t, must(t, e.admin(t, http.MethodGet, gpath+"/default", nil), http.StatusOK))
	if !g.IsDefault {
		t.Fatalf("group default %+v", g)
	}
	g = decodeConfig(t, must(t, e.admin(t, http.MethodPut, gpath+"/"+g.ConfigID, map[string]any{"copilot_mode": "lab_automation_assistant"}), http.StatusOK))
	if g.Version != 2 || !g.APIKeySet {
		t.Fatalf("group update %+v", g)
	}
	gl := decodeList(t, must(t, e.admin(t, http.MethodGet, gpath, nil), http.StatusOK))
	if gl.Total != 1 || gl.DefaultConfig == nil || gl.DefaultConfig.ConfigID != g.ConfigID {
		t.Fatalf("group list %+v", gl)
	}
	labCfg := decodeConfig(t, must(t, e.admin(t, http.MethodPost, "/v3/access/groups/"+labs+"/llm-model-configs", withDefault(nested("lab", nil))), http.StatusCreated))
	_ = labCfg
	// The user routes do not change group configurations (only whether
	// it is the user's default: see TestDefaultGroupRef); bob is in no
	// group GNS3 lets him see.
	r = must(t, e.as(t, "alice", http.MethodPut, mine+"/"+g.ConfigID, map[string]any{"name": "x"}), http.StatusForbidden)
	if !strings.HasPrefix(r.message(), "LLM model configuration '"+g.ConfigID+"' belongs to group 'staff'") {
		t.Fatalf("%s", r.body)
	}
	must(t, e.as(t, "alice", http.MethodDelete, mine+"/"+g.ConfigID, nil), http.StatusNotFound)
	must(t, e.as(t, "bob", http.MethodPut, mine+"/"+g.ConfigID, map[string]any{"name": "x"}), http.StatusNotFound)
	must(t, e.as(t, "bob", http.MethodPut, mine+"/default/"+g.ConfigID, map[string]any{}), http.StatusNotFound)

	// Alice (Group.Audit) inherits staff's and labs' configurations.
	l := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK))
	if l.Total != 2 || l.DefaultConfig == nil {
		t.Fatalf("alice's list %+v", l)
	}
	// Groups in name order: labs, then staff; the first group default wins.
	if l.Configs[0].Source != "group" || *l.Configs[0].GroupName != "labs" || *l.Configs[1].GroupName != "staff" ||
		l.DefaultConfig.Name != "lab" || l.Configs[1].APIKeyHint != "" || !l.Configs[1].APIKeySet {
		t.Fatalf("inherited %+v", l)
	}
	d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK))
	if d.Source != "group" || d.Name != "lab" || d.GroupName == nil || *d.GroupName != "labs" {
		t.Fatalf("alice's default %+v", d)
	}
	aliceID := auth.Identity{UserID: "alice", Token: e.token("alice"), Via: auth.ViaJWT}
	ec, grp, err := llmconfig.Effective(context.Background(), e.st, e.groups, aliceID)
	if err != nil || grp == nil || grp.ID != labs || ec.Name != "lab" || ec.Owner.GroupID != labs {
		t.Fatalf("Effective = %+v %+v %v", ec, grp, err)
	}
	// Her own default wins over the groups'.
	own := e.create(t, "alice", withDefault(nested("mine", nil)))
	l = decodeList(t, must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK))
	if l.Total != 3 || l.Configs[0].ConfigID != own.ConfigID || l.DefaultConfig.ConfigID != own.ConfigID {
		t.Fatalf("with own default %+v", l)
	}
	ec, grp, err = llmconfig.Effective(context.Background(), e.st, e.groups, aliceID)
	if err != nil || grp != nil || ec.ID != own.ConfigID {
		t.Fatalf("Effective = %+v %+v %v", ec, grp, err)
	}

	// Bob may not list his groups on GNS3: only his own apply, no error.
	l = decodeList(t, must(t, e.as(t, "bob", http.MethodGet, mine, nil), http.StatusOK))
	if l.Total != 0 || l.DefaultConfig != nil {
		t.Fatalf("bob %+v", l)
	}
	must(t, e.as(t, "bob", http.MethodGet, defPath, nil), http.StatusNotFound)
	bobID := auth.Identity{UserID: "bob", Token: e.token("bob"), Via: auth.ViaJWT}
	if _, _, err := llmconfig.Effective(context.Background(), e.st, e.groups, bobID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob's Effective: %v", err)
	}
	// The superadmin inherits staff's.
	d = decodeConfig(t, must(t, e.as(t, "root", http.MethodGet, defPath, nil), http.StatusOK))
	if d.Name != "team" || d.Source != "group" {
		t.Fatalf("root's default %+v", d)
	}

	// Deleting the group's configuration.
	if r := e.admin(t, http.MethodDelete, gpath+"/"+g.ConfigID, nil); r.status != http.StatusNoContent {
		t.Fatalf("group delete %d %s", r.status, r.body)
	}
	must(t, e.admin(t, http.MethodDelete, gpath+"/"+g.ConfigID, nil), http.StatusNotFound)
	must(t, e.admin(t, http.MethodGet, "/v3/access/groups/bad%20id/llm-model-configs", nil), http.StatusUnprocessableEntity)

	// Without ADMIN_TOKEN, GNS3 privileges still work...
	n := newEnv(t, envOptions{})
	other := n.gns3.AddGroup("other")
	n.gns3.AddUser(gns3test.User{Username: "alice", ACL: map[string][]string{"/access/groups/" + other: {"Group.Audit"}}})
	must(t, n.as(t, "alice", http.MethodGet, "/v3/access/groups/"+other+"/llm-model-configs", nil), http.StatusOK)
	must(t, n.admin(t, http.MethodGet, "/v3/access/groups/"+other+"/llm-model-configs", nil), http.StatusUnauthorized)
	// ...and without GNS3 either nobody manages group configurations.
	for _, o := range []envOptions{{noGNS3: true}, {noGNS3: true, adminToken: adminToken}} {
		n = newEnv(t, o)
		want := "Group LLM model configurations are managed with ADMIN_TOKEN, which this server does not have"
		if o.adminToken != "" {
			want = "Group LLM model configurations are managed with the administrator token (Authorization: Bearer <ADMIN_TOKEN>)"
		}
		for _, authz := range []string{"Bearer " + adminToken + "x", "Bearer " + n.token("alice")} {
			r = must(t, n.do(t, http.MethodGet, gpath, authz, nil), http.StatusForbidden)
			if r.message() != want {
				t.Fatalf("without GNS3 (%+v): %s", o, r.body)
			}
		}
	}
	e.scan(t, secretKey)
	e.scan(t, adminToken)
}

func TestValidation(t *testing.T) {
	e := newEnv(t, envOptions{})
	base := func(cfg map[string]any) map[string]any { return nested("n", cfg) }
	long := strings.Repeat("é", 101)
	tests := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"no name", map[string]any{"config": map[string]any{"provider": "openai", "model": "m", "context_limit": 8}}, 422, "Field 'name' is required"},
		{"blank name", map[string]any{"name": "  ", "config": map[string]any{}}, 422, "Field 'name' must not be blank"},
		{"long name", map[string]any{"name": long}, 422, "Field 'name' must be at most 100 characters (got 101)"},
		{"name type", map[string]any{"name": 5}, 422, "Field 'name' must be a string"},
		{"model type", map[string]any{"name": "n", "model_type": "llm"}, 422, "Field 'model_type' must be one of: text, vision, stt, tts, multimodal, embedding, reranking, other"},
		{"temperature high", base(map[string]any{"temperature": 2.5}), 422, "Field 'config.temperature' must be a number between 0 and 2"},
		{"temperature negative", base(map[string]any{"temperature": -0.1}), 422, "Field 'config.temperature' must be a number between 0 and 2"},
		{"temperature string", base(map[string]any{"temperature": "hot"}), 422, "Field 'config.temperature' must be a number between 0 and 2"},
		{"context zero", base(map[string]any{"context_limit": 0}), 422, "Field 'config.context_limit' must be a positive integer, in thousands of tokens (128 means 128K)"},
		{"context fraction", base(map[string]any{"context_limit": 12.5}), 422, "Field 'config.context_limit' must be a positive integer, in thousands of tokens (128 means 128K)"},
		{"context huge", base(map[string]any{"context_limit": 2000000}), 422, "Field 'config.context_limit' must be at most 1000000 (thousands of tokens)"},
		{"no context", map[string]any{"name": "n", "config": map[string]any{"provider": "openai", "model": "m"}}, 422, "Field 'config.context_limit' is required (the model's context window in thousands of tokens, e.g. 128 for 128K)"},
		{"max tokens", base(map[string]any{"max_tokens": 0}), 422, "Field 'config.max_tokens' must be a positive integer (at most 10000000)"},
		{"max tokens float", base(map[string]any{"max_tokens": 1.5}), 422, "Field 'config.max_tokens' must be a positive integer (at most 10000000)"},
		{"strategy", base(map[string]any{"context_strategy": "greedy"}), 422, "Field 'config.context_strategy' must be one of: conservative, balanced, aggressive"},
		{"approval", base(map[string]any{"approval": "sometimes"}), 422, "Field 'config.approval' must be one of: off, changes, all"},
		{"approval type", base(map[string]any{"approval": true}), 422, "Field 'config.approval' must be one of: off, changes, all"},
		{"mode", base(map[string]any{"copilot_mode": "chaos"}), 422, "Field 'config.copilot_mode' must be one of: teaching_assistant, lab_automation_assistant"},
		{"top-level mode", map[string]any{"name": "n", "copilot_mode": "chaos", "config": map[string]any{}}, 422, "Field 'copilot_mode' must be one of: teaching_assistant, lab_automation_assistant"},
		{"mode twice", map[string]any{"name": "n", "copilot_mode": "teaching_assistant", "config": map[string]any{"copilot_mode": "teaching_assistant"}}, 422, "Give 'copilot_mode' either at the top level or inside 'config', not both"},
		{"blank provider", base(map[string]any{"provider": " "}), 422, "Field 'config.provider' must not be blank"},
		{"no provider", map[string]any{"name": "n", "config": map[string]any{"model": "m", "context_limit": 8}}, 422, "Field 'config.provider' is required"},
		{"unknown provider", base(map[string]any{"provider": "aws"}), 422, "Field 'config.base_url' is required for provider 'aws' (providers with a default base URL: anthropic, deepseek, gemini, google, groq, lmstudio, mistral, ollama, openai, openrouter, vllm, xai)"},
		{"bad base url", base(map[string]any{"base_url": "ftp://x"}), 422, "Field 'config.base_url' must be an http:// or https:// URL with a host"},
		{"base url creds", base(map[string]any{"base_url": "https://u:p@x/v1"}), 422, "Field 'config.base_url' must not contain credentials (give the key as api_key)"},
		{"base url query", base(map[string]any{"base_url": "https://x/v1?key=1"}), 422, "Field 'config.base_url' must be a base URL without query or fragment"},
		{"no model", map[string]any{"name": "n", "config": map[string]any{"provider": "openai", "context_limit": 8}}, 422, "Field 'config.model' is required"},
		{"model type wrong", base(map[string]any{"model": 4}), 422, "Field 'config.model' must be a string"},
		{"api key type", base(map[string]any{"api_key": 12345}), 422, "Field 'config.api_key' must be a string"},
		{"api key control", base(map[string]any{"api_key": "sk-\u0000"}), 422, "Field 'config.api_key' must not contain control characters"},
		{"unknown top-level", map[string]any{"name": "n", "config": map[string]any{}, "bogus": 1}, 422, "Unknown field 'bogus'"},
		{"flat field beside config", map[string]any{"name": "n", "config": map[string]any{}, "model": "m"}, 422, "Unknown field 'model': configuration fields go inside 'config'"},
		{"read-only", map[string]any{"name": "n", "version": 3}, 422, "Field 'version' is read-only"},
		{"read-only in config", base(map[string]any{"api_key_hint": "x"}), 422, "Field 'config.api_key_hint' is read-only"},
		{"top-level in config", base(map[string]any{"is_default": true}), 422, "Field 'config.is_default' belongs at the top level, not inside 'config'"},
		{"config not object", map[string]any{"name": "n", "config": []any{}}, 422, "Field 'config' must be an object"},
		{"is_default type", map[string]any{"name": "n", "is_default": "yes"}, 422, "Field 'is_default' must be a boolean"},
		{"expected_version on create", map[string]any{"name": "n", "expected_version": 1, "config": map[string]any{"provider": "openai", "model": "m", "context_limit": 8}}, 422, "Field 'expected_version' is for updates only"},
		{"too many extras", base(func() map[string]any {
			m := map[string]any{}
			for i := range llmconfigs.MaxExtraFields + 1 {
				m[fmt.Sprint("x", i)] = i
			}
			return m
		}()), 422, "A configuration may have at most 64 extra keys (got 65)"},
		{"array body", `[]`, 422, "Request body must be a JSON object"},
		{"null body", `null`, 422, "Request body must be a JSON object"},
		{"malformed", `{"name":`, 400, "Malformed JSON in request body"},
		{"empty", ``, 400, "Request body must not be empty"},
		{"flat unknown provider", map[string]any{"name": "n", "provider": "bedrock", "model": "m", "context_limit": 8}, 422, "Field 'base_url' is required for provider 'bedrock'"},
		{"flat context", map[string]any{"name": "n", "provider": "openai", "model": "m", "context_limit": -1}, 422, "Field 'context_limit' must be a positive integer, in thousands of tokens (128 means 128K)"},
		// Beyond float64: no JSON encoder could store it (a 500 before).
		{"flat extra key too large", `{"name":"n","provider":"openai","model":"m","context_limit":8,"extra":1e700}`, 422, "Field 'extra' holds a number too large to store"},
		{"nested extra key too large", `{"name":"n","config":{"provider":"openai","model":"m","context_limit":8,"extra":{"a":[1,-1e400]}}}`, 422, "Field 'config.extra' holds a number too large to store"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.as(t, "alice", http.MethodPost, mine, tc.body)
			if r.status != tc.status || !strings.HasPrefix(r.message(), tc.msg) {
				t.Fatalf("got %d %s\nwant %d %q", r.status, r.body, tc.status, tc.msg)
			}
		})
	}
	if cs, _ := e.st.ListLLMConfigs(context.Background(), store.UserOwner("alice")); len(cs) != 0 {
		t.Fatalf("invalid requests stored %d configs", len(cs))
	}
	// Update-only checks.
	c := e.create(t, "alice", nested("n", nil))
	for _, tc := range []struct {
		path string
		body any
		st   int
		msg  string
	}{
		{mine + "/not-a-uuid", map[string]any{}, 422, "Invalid config_id: must be a UUID"},
		{mine + "/" + c.ConfigID, map[string]any{"expected_version": 0}, 422, "Field 'expected_version' must be a positive integer (the version you read)"},
		{mine + "/" + c.ConfigID, map[string]any{"expected_version": "1"}, 422, "Field 'expected_version' must be a positive integer (the version you read)"},
		{mine + "/" + c.ConfigID, map[string]any{"config": map[string]any{"temperature": 3}}, 422, "Field 'config.temperature' must be a number between 0 and 2"},
		{mine + "/00000000-0000-4000-8000-000000000000", map[string]any{"name": "x"}, 404, "LLM model configuration '00000000-0000-4000-8000-000000000000' not found"},
	} {
		r := e.as(t, "alice", http.MethodPut, tc.path, tc.body)
		if r.status != tc.st || r.message() != tc.msg {
			t.Errorf("PUT %s %v: %d %s", tc.path, tc.body, r.status, r.body)
		}
	}
	// Case and spaces of enumerations are forgiven; a UUID is normalized.
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+strings.ToUpper(c.ConfigID), map[string]any{"model_type": " Vision ", "copilot_mode": "LAB_AUTOMATION_ASSISTANT"}), http.StatusOK))
	if u.ModelType != "vision" || u.Config["copilot_mode"] != "lab_automation_assistant" {
		t.Fatalf("%+v", u)
	}
	// max_tokens: the string "null" (the GNS3 form) removes it.
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"max_tokens": 10}), http.StatusOK)
	u = decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"max_tokens": "null"}), http.StatusOK))
	if _, ok := u.Config["max_tokens"]; ok {
		t.Fatalf("%+v", u.Config)
	}
}

// TestUnsetDefault: is_default false (the web UI's "unset default") on
// the default leaves the owner with none; on another configuration it
// changes no default.
func TestUnsetDefault(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	c := e.create(t, "alice", map[string]any{"name": "n", "is_default": true, "config": map[string]any{"provider": "openai", "model": "m", "context_limit": 8}})
	o := e.create(t, "alice", nested("other", nil))
	bob := e.create(t, "bob", withDefault(nested("bob's", nil)))

	// A configuration that is not the default: the default stays.
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+o.ConfigID, map[string]any{"is_default": false}), http.StatusOK))
	if u.IsDefault || u.ConfigID != o.ConfigID {
		t.Fatalf("non-default after is_default false: %+v", u)
	}
	if d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != c.ConfigID {
		t.Fatalf("default after unsetting a non-default: %+v, want %s", d, c.ConfigID)
	}

	// The default: 200 with is_default false and the other changes made;
	// the owner has no default left.
	u = decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"is_default": false, "name": "changed"}), http.StatusOK))
	if u.IsDefault || u.Name != "changed" || u.Version != 2 {
		t.Fatalf("after unsetting the default: %+v, want is_default false, name changed, version 2", u)
	}
	must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusNotFound)
	if _, err := e.st.DefaultLLMConfig(ctx, store.UserOwner("alice")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("store default after unsetting: %v, want ErrNotFound", err)
	}
	for _, l := range decodeList(t, must(t, e.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK)).Configs {
		if l.IsDefault {
			t.Fatalf("%s still listed as default", l.ConfigID)
		}
	}
	// Another user's default is untouched.
	if d, err := e.st.DefaultLLMConfig(ctx, store.UserOwner("bob")); err != nil || d.ID != bob.ConfigID {
		t.Fatalf("bob's default %+v, %v", d, err)
	}
	// Again, with no default at all: nothing to do.
	if u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"is_default": false}), http.StatusOK)); u.IsDefault {
		t.Fatal("became default")
	}
	must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusNotFound)

	// is_default true in an update makes it the default.
	u = decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+o.ConfigID, map[string]any{"is_default": true}), http.StatusOK))
	if !u.IsDefault {
		t.Fatal("not default")
	}
	if d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != o.ConfigID {
		t.Fatalf("default %+v", d)
	}
	// Another user cannot unset it.
	must(t, e.as(t, "bob", http.MethodPut, mine+"/"+o.ConfigID, map[string]any{"is_default": false}), http.StatusNotFound)
	if d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != o.ConfigID {
		t.Fatalf("default after bob's attempt %+v", d)
	}
}

// TestUnsetGroupDefault: is_default false on a group's default, with the
// administrator token.
func TestUnsetGroupDefault(t *testing.T) {
	e := newEnv(t, envOptions{adminToken: adminToken})
	gpath := "/v3/access/groups/staff/llm-model-configs"
	g := decodeConfig(t, must(t, e.admin(t, http.MethodPost, gpath, withDefault(nested("team", nil))), http.StatusCreated))
	h := decodeConfig(t, must(t, e.admin(t, http.MethodPost, gpath, nested("spare", nil)), http.StatusCreated))
	if u := decodeConfig(t, must(t, e.admin(t, http.MethodPut, gpath+"/"+h.ConfigID, map[string]any{"is_default": false}), http.StatusOK)); u.IsDefault {
		t.Fatal("non-default became default")
	}
	if d := decodeConfig(t, must(t, e.admin(t, http.MethodGet, gpath+"/default", nil), http.StatusOK)); d.ConfigID != g.ConfigID {
		t.Fatalf("group default %+v, want %s", d, g.ConfigID)
	}
	if u := decodeConfig(t, must(t, e.admin(t, http.MethodPut, gpath+"/"+g.ConfigID, map[string]any{"is_default": false}), http.StatusOK)); u.IsDefault {
		t.Fatal("still default")
	}
	must(t, e.admin(t, http.MethodGet, gpath+"/default", nil), http.StatusNotFound)
}

// racingStore makes another configuration the default just before each
// unset reaches the store.
type racingStore struct {
	store.LLMConfigs
	other func() string
}

func (s racingStore) UnsetDefaultLLMConfig(ctx context.Context, owner store.Owner, id string) error {
	if other := s.other(); other != "" {
		if _, err := s.SetDefaultLLMConfig(ctx, owner, other); err != nil {
			return err
		}
	}
	return s.LLMConfigs.UnsetDefaultLLMConfig(ctx, owner, id)
}

// TestUnsetDefaultRacesSetDefault: a default moved to another
// configuration between the update and the unset stays; the answer tells
// the configuration is not the default.
func TestUnsetDefaultRacesSetDefault(t *testing.T) {
	var other atomic.Value
	other.Store("")
	e := newEnv(t, envOptions{wrapStore: func(st *sqlite.Store) store.LLMConfigs {
		return racingStore{LLMConfigs: st, other: func() string { return other.Load().(string) }}
	}})
	c := e.create(t, "alice", withDefault(nested("n", nil)))
	o := e.create(t, "alice", nested("other", nil))
	other.Store(o.ConfigID)
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"is_default": false}), http.StatusOK))
	if u.IsDefault {
		t.Fatalf("answer %+v: is_default true", u)
	}
	if d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != o.ConfigID {
		t.Fatalf("default %+v, want %s (set meanwhile)", d, o.ConfigID)
	}
}

// TestUnsetDefaultConcurrent: PUT is_default false on the default against
// PUT .../default/{other}: in either order other ends as the default.
func TestUnsetDefaultConcurrent(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.create(t, "alice", nested("n", nil))
	o := e.create(t, "alice", nested("other", nil))
	for round := range 10 {
		must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+c.ConfigID, nil), http.StatusOK)
		var wg sync.WaitGroup
		var unset, set *response
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			unset = e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"is_default": false})
		})
		wg.Go(func() {
			<-start
			set = e.as(t, "alice", http.MethodPut, mine+"/default/"+o.ConfigID, nil)
		})
		close(start)
		wg.Wait()
		if unset.status != http.StatusOK || set.status != http.StatusOK {
			t.Fatalf("round %d: unset %d %s, set %d %s", round, unset.status, unset.body, set.status, set.body)
		}
		if decodeConfig(t, unset).IsDefault {
			t.Fatalf("round %d: unset answered is_default true", round)
		}
		if d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != o.ConfigID {
			t.Fatalf("round %d: default %s, want %s", round, d.ConfigID, o.ConfigID)
		}
	}
}

// TestNoEncryptionKey: without a key, storing an API key is 503 and
// everything else works.
func TestNoEncryptionKey(t *testing.T) {
	e := newEnv(t, envOptions{noBox: true})
	r := must(t, e.as(t, "alice", http.MethodPost, mine, nested("n", map[string]any{"api_key": secretKey})), http.StatusServiceUnavailable)
	if r.message() != llmconfigs.MsgNoEncryptionKey {
		t.Fatalf("%s", r.body)
	}
	c := e.create(t, "alice", nested("n", nil))
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"api_key": secretKey}), http.StatusServiceUnavailable)
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+c.ConfigID, map[string]any{"copilot_mode": "teaching_assistant", "api_key": ""}), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+c.ConfigID, nil), http.StatusOK)
	if cs, _ := e.st.ListLLMConfigs(context.Background(), store.UserOwner("alice")); len(cs) != 1 {
		t.Fatalf("%d configs", len(cs))
	}
	e.scan(t, secretKey)
}

// TestOneRouterServesEveryRoute: the routes mount together on one
// router; a GET of a single configuration is 405 with the methods the
// path is served with, as for any unserved method, and the literal own
// and default paths are served beside {config_id}.
func TestOneRouterServesEveryRoute(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.create(t, "alice", nested("n", nil))
	r := must(t, e.as(t, "alice", http.MethodGet, mine+"/"+c.ConfigID, nil), http.StatusMethodNotAllowed)
	if r.header.Get("Allow") != "DELETE, PUT" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	// .../own is also a {config_id} for PUT and DELETE.
	r = must(t, e.as(t, "alice", http.MethodPost, ownPath, nil), http.StatusMethodNotAllowed)
	if r.header.Get("Allow") != "DELETE, GET, HEAD, PUT" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	must(t, e.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+c.ConfigID, nil), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodGet, mine+"/default", nil), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodDelete, mine+"/"+c.ConfigID, nil), http.StatusNoContent)
}

func TestEffectiveWithoutGroups(t *testing.T) {
	e := newEnv(t, envOptions{noGNS3: true})
	id := auth.Identity{UserID: "alice", Via: auth.ViaJWT}
	if _, _, err := llmconfig.Effective(context.Background(), e.st, nil, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("none: %v", err)
	}
	// A group default does not apply without a group source.
	if err := e.st.CreateLLMConfig(context.Background(), &store.LLMConfig{ID: "00000000-0000-4000-8000-000000000001", Owner: store.GroupOwner("g"), Name: "g", ModelType: "text", Config: map[string]any{"provider": "openai", "model": "m", "context_limit": 8}, IsDefault: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := llmconfig.Effective(context.Background(), e.st, llmconfig.NoGroups{}, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no groups: %v", err)
	}
	c := e.create(t, "alice", withDefault(nested("own", nil)))
	got, g, err := llmconfig.Effective(context.Background(), e.st, llmconfig.NewGroupSource(nil, nil, 0), id)
	if err != nil || got.ID != c.ConfigID || g != nil {
		t.Fatalf("%+v %+v %v", got, g, err)
	}
}

func TestSingleUserGNS3Token(t *testing.T) {
	// The JSON of every view is stable: keys present even when empty.
	e := newEnv(t, envOptions{})
	c := e.create(t, "alice", nested("n", nil))
	r := must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK)
	var raw struct {
		Configs []map[string]json.RawMessage `json:"configs"`
	}
	r.decode(t, &raw)
	for _, k := range []string{"config_id", "name", "model_type", "config", "user_id", "group_id", "is_default", "version", "created_at", "updated_at", "source", "group_name", "api_key_set"} {
		if _, ok := raw.Configs[0][k]; !ok {
			t.Errorf("no %s in %s", k, r.body)
		}
	}
	if _, ok := raw.Configs[0]["api_key_hint"]; ok {
		t.Error("api_key_hint present without a key")
	}
	_ = c
}

// FuzzBody: any create or update body is either accepted (with
// config.api_key null) or refused with a 4xx and a message; never a 500.
func FuzzBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"n","provider":"openai","model":"m","context_limit":8}`,
		`{"name":"n","config":{"provider":"x","base_url":"http://h","model":"m","context_limit":1e3,"api_key":"sk-SECRET-fuzz-1234"}}`,
		`{"copilot_mode":"teaching_assistant"}`, `{"config":null}`, `{"config":{"max_tokens":"null"}}`, `[]`, `null`, ``,
		`{"name":"\u0000"}`, `{"expected_version":1e300}`, `{"x":{"y":[1,2,{"z":null}]}}`, `{"temperature":"NaN"}`} {
		f.Add(s)
	}
	e := newEnv(f, envOptions{noGNS3: true})
	c := e.create(f, "alice", nested("seed", nil))
	f.Fuzz(func(t *testing.T, body string) {
		for _, req := range []struct{ method, path string }{{http.MethodPost, mine}, {http.MethodPut, mine + "/" + c.ConfigID}} {
			r := e.as(t, "alice", req.method, req.path, body)
			switch {
			case r.status == http.StatusCreated || r.status == http.StatusOK:
				var got config
				if err := json.Unmarshal(r.body, &got); err != nil || got.ConfigID == "" || got.Config["api_key"] != nil {
					t.Fatalf("%s %q: %s", req.method, body, r.body)
				}
			case r.status >= 400 && r.status < 500 && r.message() != "":
			default:
				t.Fatalf("%s %q: %d %s", req.method, body, r.status, r.body)
			}
		}
	})
}
