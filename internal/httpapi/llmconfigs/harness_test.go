package llmconfigs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/llmconfigs"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/llmconfig"
	"agentchat/internal/secrets"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
	"agentchat/internal/syncbuf"
)

const (
	jwtSecret  = "llmconfigs-test-secret-0123456789abcdef"
	adminToken = "admin-token-0123456789abcdef0123456789"
	// secretKey is the recognizable API key the scans look for.
	secretKey = "sk-SECRET-llmconfigs-9f8e7d6c5b4a-abcd"
)

// env is a running server with every LLM configuration route over a real
// SQLite file, JWT authentication, a secrets box and (optionally) the fake
// GNS3 controller.
type env struct {
	t       testing.TB
	st      *sqlite.Store
	dbPath  string
	box     *secrets.Box
	server  *httptest.Server
	logs    *syncbuf.Buffer
	jwt     *auth.JWTVerifier
	gns3    *gns3test.Server
	users   *userpath.Resolver
	groups  llmconfig.GroupSource
	mu      sync.Mutex
	bodies  [][]byte // every response body, for the secret scans
	handler *llmconfigs.Handlers
}

type envOptions struct {
	noGNS3     bool
	noBox      bool
	adminToken string
	// gns3URL, when set, is the GNS3 controller to use instead of the
	// fake one.
	gns3URL string
	// wrapStore, when set, gives the store the handlers use in place of
	// the SQLite store (e.st stays the SQLite store).
	wrapStore func(*sqlite.Store) store.LLMConfigs
	// limits are the store's limits (none when zero).
	limits store.Limits
	// now is the clock of the privilege cache (nil: time.Now).
	now func() time.Time
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, logs: &syncbuf.Buffer{}}
	e.dbPath = filepath.Join(t.TempDir(), "agentchat.db")
	st, err := sqlite.Open(context.Background(), e.dbPath, sqlite.WithLimits(o.limits))
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	t.Cleanup(func() { _ = st.Close() })
	if !o.noBox {
		key := make([]byte, secrets.KeyLen)
		_, _ = rand.Read(key)
		if e.box, err = secrets.NewBox(key); err != nil {
			t.Fatal(err)
		}
	}
	a, err := auth.NewAuthenticator([]byte(jwtSecret), st, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.WaitTouches)
	e.jwt = a.Verifier()
	var client *gns3.Client
	switch {
	case o.gns3URL != "":
		client, err = gns3.New(o.gns3URL, nil, gns3.WithCallTimeout(2*time.Second))
	case !o.noGNS3:
		e.gns3 = gns3test.NewServer(t, nil)
		client, err = gns3.New(e.gns3.URL, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	e.users = userpath.New(client)
	e.groups = llmconfig.NewGroupSource(client, e.users, 0)
	var hst store.LLMConfigs = st
	if o.wrapStore != nil {
		hst = o.wrapStore(st)
	}
	e.handler = llmconfigs.New(hst, llmconfigs.Options{Secrets: e.box, Users: e.users, Groups: e.groups, AdminToken: o.adminToken,
		Auth: a, GNS3: client, Now: o.now})
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := httpapi.NewRouter(httpapi.Deps{Auth: a, Logger: log}, e.handler.Routes()...)
	e.server = httptest.NewServer(h)
	t.Cleanup(e.server.Close)
	return e
}

func (e *env) token(user string) string {
	e.t.Helper()
	return e.tokenFor(e.t, user)
}

func (e *env) tokenFor(t testing.TB, user string) string {
	t.Helper()
	tok, err := e.jwt.Issue(user, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) message() string {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(r.body, &m)
	return m.Message
}

func (r *response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends a request with the Authorization header authz ("" for none)
// and body (string or JSON-encoded; nil for none).
func (e *env) do(t testing.TB, method, path, authz string, body any) *response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.server.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.bodies = append(e.bodies, b)
	e.mu.Unlock()
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

// as sends a request as user (a JWT whose sub is user).
func (e *env) as(t testing.TB, user, method, path string, body any) *response {
	t.Helper()
	return e.do(t, method, path, "Bearer "+e.tokenFor(t, user), body)
}

func (e *env) admin(t testing.TB, method, path string, body any) *response {
	t.Helper()
	return e.do(t, method, path, "Bearer "+adminToken, body)
}

// must checks the status of r.
func must(t testing.TB, r *response, status int) *response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

// config is a configuration as answered, decoded loosely.
type config struct {
	ConfigID   string         `json:"config_id"`
	Name       string         `json:"name"`
	ModelType  string         `json:"model_type"`
	Config     map[string]any `json:"config"`
	UserID     *string        `json:"user_id"`
	GroupID    *string        `json:"group_id"`
	IsDefault  bool           `json:"is_default"`
	Version    int64          `json:"version"`
	CreatedAt  string         `json:"created_at"`
	UpdatedAt  string         `json:"updated_at"`
	APIKeySet  bool           `json:"api_key_set"`
	APIKeyHint string         `json:"api_key_hint"`
	Source     string         `json:"source"`
	GroupName  *string        `json:"group_name"`
}

type list struct {
	Configs       []config `json:"configs"`
	DefaultConfig *config  `json:"default_config"`
	Total         int      `json:"total"`
}

func decodeConfig(t testing.TB, r *response) config {
	t.Helper()
	var c config
	r.decode(t, &c)
	return c
}

func decodeList(t testing.TB, r *response) list {
	t.Helper()
	var l list
	r.decode(t, &l)
	if l.Total != len(l.Configs) {
		t.Fatalf("total %d for %d configs", l.Total, len(l.Configs))
	}
	return l
}

// create makes a configuration of user through the API.
func (e *env) create(t testing.TB, user string, body any) config {
	t.Helper()
	return decodeConfig(t, must(t, e.as(t, user, http.MethodPost, "/v3/access/users/me/llm-model-configs", body), http.StatusCreated))
}

// nested is a valid creation body of the nested form.
func nested(name string, extra map[string]any) map[string]any {
	cfg := map[string]any{"provider": "openai", "model": "gpt-4o", "context_limit": 128}
	for k, v := range extra {
		cfg[k] = v
	}
	return map[string]any{"name": name, "model_type": "text", "config": cfg}
}

// withDefault adds is_default: true to a creation body.
func withDefault(body map[string]any) map[string]any {
	body["is_default"] = true
	return body
}

// scan fails when s appears in any response body, log line or SQLite file.
func (e *env) scan(t testing.TB, s string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range e.bodies {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("a response body holds the secret: %s", b)
		}
	}
	if strings.Contains(e.logs.String(), s) {
		t.Errorf("the logs hold the secret")
	}
	found := 0
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		b, err := os.ReadFile(e.dbPath + suffix)
		if err != nil {
			continue
		}
		found++
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s holds the secret", filepath.Base(e.dbPath+suffix))
		}
	}
	if found == 0 {
		t.Error("no SQLite file to scan")
	}
}
