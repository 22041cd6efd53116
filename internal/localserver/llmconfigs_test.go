package localserver

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/syncbuf"

	"github.com/google/uuid"
)

// Per-user LLM configurations as the GNS3 web UI's AI profile page uses
// them, against the local server, two scripted LLMs and a real SQLite file.

const (
	cfgSecret = "llmconfig-test-secret-0123456789abcdef"
	aliceKey  = "sk-alice-PRIVATE-9c1e44d0a7b3"
	project   = "9f1d8e4a-5b6c-4d7e-8f90-a1b2c3d4e5f6"
)

type user struct {
	t     *testing.T
	url   string
	token string
	// bodies keeps every response body, to scan for the key.
	bodies *syncbuf.Buffer
}

func (u user) do(method, path string, body any) (int, map[string]any) {
	u.t.Helper()
	st, b := u.raw(method, path, body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return st, out
}

// raw sends a request and returns the status and the body.
func (u user) raw(method, path string, body any) (int, []byte) {
	u.t.Helper()
	st, b := sendJSON(u.t, u.url, u.token, method, path, body)
	u.bodies.Write(b)
	return st, b
}

// chat runs a non-streamed project turn and returns its status and body.
func (u user) chat(msg string) (int, map[string]any) {
	u.t.Helper()
	return u.do(http.MethodPost, "/v3/projects/"+project+"/chat/stream", map[string]any{"message": msg, "session_id": uuid.NewString(), "stream": false})
}

func newKeyB64(t *testing.T) string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

func TestUserLLMConfigurations(t *testing.T) {
	server, own := llmtest.NewServer(t), llmtest.NewServer(t)
	server.SetDefault(llmtest.Reply{Text: "from the server default"})
	own.SetDefault(llmtest.Reply{Text: "from alice's model"})
	dir := t.TempDir()
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": dir, "JWT_SECRET": cfgSecret, "ENCRYPTION_KEY": newKeyB64(t),
		"OPENAI_BASE_URL": server.BaseURL(), "OPENAI_API_KEY": "sk-server-default", "OPENAI_MODEL": "server-model",
		"LLM_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32", // alice's scripted model
	}
	url, _, logs, stop := start(t, vars)
	v, _ := auth.NewJWTVerifier([]byte(cfgSecret), time.Now)
	issue := func(name string) string { tok, _ := v.Issue(name, time.Hour); return tok }
	bodies := &syncbuf.Buffer{}
	alice := user{t: t, url: url, token: issue("alice"), bodies: bodies}
	bob := user{t: t, url: url, token: issue("bob"), bodies: bodies}
	base := "/v3/access/users/me/llm-model-configs"

	st, created := alice.do(http.MethodPost, base, map[string]any{
		"name": "My GPT", "model_type": "text", "is_default": true,
		"config": map[string]any{"provider": "openai", "base_url": own.BaseURL(), "model": "alice-model", "context_limit": 8, "api_key": aliceKey},
	})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, created)
	}
	id, _ := created["config_id"].(string)
	if cfg, _ := created["config"].(map[string]any); cfg == nil || cfg["api_key"] != nil || created["api_key_set"] != true {
		t.Fatalf("created config: %v", created)
	}

	// Both chat at once: each reaches their own model.
	var wg sync.WaitGroup
	answers := map[string]string{}
	var mu sync.Mutex
	for name, u := range map[string]user{"alice": alice, "bob": bob} {
		wg.Go(func() {
			st, out := u.chat("hello")
			mu.Lock()
			defer mu.Unlock()
			answers[name] = ""
			if st == http.StatusOK {
				answers[name], _ = out["content"].(string)
			}
		})
	}
	wg.Wait()
	if answers["alice"] != "from alice's model" || answers["bob"] != "from the server default" {
		t.Fatalf("answers = %v", answers)
	}
	for _, r := range own.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+aliceKey || r.Model != "alice-model" {
			t.Fatalf("alice's LLM got Authorization %q, model %q", got, r.Model)
		}
	}
	for _, r := range server.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-server-default" {
			t.Fatalf("the server default got Authorization %q", got)
		}
	}

	// The web UI's mode toggle: only {copilot_mode}; the key stays, the
	// version moves; a stale version is a 409.
	st, toggled := alice.do(http.MethodPut, base+"/"+id, map[string]any{"copilot_mode": "lab_automation_assistant"})
	if st != http.StatusOK || toggled["version"] != float64(2) || toggled["api_key_set"] != true ||
		toggled["config"].(map[string]any)["copilot_mode"] != "lab_automation_assistant" {
		t.Fatalf("toggle: %d %v", st, toggled)
	}
	st, conflict := alice.do(http.MethodPut, base+"/"+id, map[string]any{"name": "Renamed", "expected_version": 1})
	if want := "Concurrent modification detected. Expected version 1, but current version is 2. Please retry."; st != http.StatusConflict || conflict["message"] != want {
		t.Fatalf("stale update: %d %v", st, conflict)
	}
	n := len(own.Requests())
	if st, _ := alice.chat("again"); st != http.StatusOK || len(own.Requests()) <= n || own.Requests()[n].Header.Get("Authorization") != "Bearer "+aliceKey {
		t.Fatalf("after the toggle alice's turn: %d", st)
	}
	// The configuration's mode applies to the new session.
	st, body := alice.raw(http.MethodGet, "/v3/projects/"+project+"/chat/sessions?copilot_mode=lab_automation_assistant", nil)
	var list []map[string]any
	if err := json.Unmarshal(body, &list); st != http.StatusOK || err != nil || len(list) != 1 {
		t.Fatalf("sessions in the configuration's mode: %d %s", st, body)
	}

	// Bob can neither read nor change Alice's configurations.
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/v3/access/users/alice/llm-model-configs", nil},
		{http.MethodGet, base + "/" + id, nil},
		{http.MethodPut, base + "/" + id, map[string]any{"name": "mine now"}},
		{http.MethodDelete, base + "/" + id, nil},
		{http.MethodPut, base + "/default/" + id, map[string]any{}},
	} {
		st, _ := bob.do(tc.method, tc.path, tc.body)
		if st != http.StatusForbidden && st != http.StatusNotFound && st != http.StatusMethodNotAllowed {
			t.Errorf("bob %s %s: %d", tc.method, tc.path, st)
		}
	}
	if st, got := alice.do(http.MethodGet, base+"/default", nil); st != http.StatusOK || got["name"] != "My GPT" {
		t.Fatalf("alice's default after bob: %d %v", st, got)
	}

	// The key is in no response, log line or store file.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(bodies.String(), aliceKey) || strings.Contains(logs.String(), aliceKey) {
		t.Fatal("the key appears in a response or a log line")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(aliceKey)) || bytes.Contains(b, []byte(aliceKey[3:])) {
			t.Fatalf("%s holds the key in plaintext", filepath.Base(f))
		}
	}

	// Restarted with another ENCRYPTION_KEY: a clear error on the turn, and
	// the provider never receives an empty key.
	vars["ENCRYPTION_KEY"] = newKeyB64(t)
	url, _, _, _ = start(t, vars)
	alice.url = url
	n = len(own.Requests())
	st, out := alice.chat("after the rotation")
	if msg, _ := out["message"].(string); st != http.StatusBadRequest || !strings.Contains(msg, "The API key of configuration 'My GPT' cannot be decrypted; enter it again.") {
		t.Fatalf("turn with an undecryptable key: %d %v", st, out)
	}
	if len(own.Requests()) != n {
		t.Fatal("the provider was called without the key")
	}
}
