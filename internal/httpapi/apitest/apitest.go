// Package apitest runs agentchat routes in a real net/http test server over
// a real SQLite file, with JWT authentication, for handler tests.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"

	"github.com/google/uuid"
)

// Secret is the JWT secret of test servers.
const Secret = "test-secret-0123456789abcdef0123456789"

// Env is a running test server and what it is made of.
type Env struct {
	T        testing.TB
	Store    store.Store
	Auth     *auth.Authenticator
	Verifier *auth.JWTVerifier
	Server   *httptest.Server
	DBPath   string
}

// Options tune New.
type Options struct {
	// SingleUser runs without a JWT secret (user "local").
	SingleUser bool
	// Projects is the project directory; nil lets every project in.
	Projects httpapi.ProjectChecker
	// Store overrides the SQLite store.
	Store store.Store
	// DBPath reuses an SQLite file (to test restarts).
	DBPath string
}

// New starts a server for the routes made by routes from the store.
func New(t testing.TB, opt Options, routes func(st store.Store, a *auth.Authenticator) []httpapi.Route) *Env {
	t.Helper()
	e := &Env{T: t, Store: opt.Store}
	if e.Store == nil {
		e.DBPath = opt.DBPath
		if e.DBPath == "" {
			e.DBPath = filepath.Join(t.TempDir(), "agentchat.db")
		}
		st, err := sqlite.Open(context.Background(), e.DBPath)
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		e.Store = st
		t.Cleanup(func() { _ = st.Close() })
	}
	var secret []byte
	if !opt.SingleUser {
		secret = []byte(Secret)
		v, err := auth.NewJWTVerifier(secret, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		e.Verifier = v
	}
	a, err := auth.NewAuthenticator(secret, e.Store, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	e.Auth = a
	t.Cleanup(a.WaitTouches) // runs before the store's cleanup
	projects := opt.Projects
	if projects == nil {
		projects = gns3.OpenDirectory{}
	}
	h := httpapi.NewRouter(httpapi.Deps{Auth: a, Projects: projects, Logger: slog.New(slog.DiscardHandler), SingleUser: opt.SingleUser}, routes(e.Store, a)...)
	e.Server = httptest.NewServer(h)
	t.Cleanup(e.Server.Close)
	return e
}

// Token issues a valid JWT for user.
func (e *Env) Token(user string) string {
	e.T.Helper()
	if e.Verifier == nil {
		return ""
	}
	tok, err := e.Verifier.Issue(user, time.Hour)
	if err != nil {
		e.T.Fatal(err)
	}
	return tok
}

// APIKey stores a new active API key of user (no expiry) and returns its
// secret, for "Authorization: Bearer <secret>".
func (e *Env) APIKey(user string) string {
	e.T.Helper()
	return e.StoreAPIKey(user, time.Time{})
}

// StoreAPIKey stores a new API key of user expiring at expires (zero:
// never) and returns its secret.
func (e *Env) StoreAPIKey(user string, expires time.Time) string {
	e.T.Helper()
	secret, prefix, hash, err := auth.GenerateAPIKey()
	if err != nil {
		e.T.Fatal(err)
	}
	k := &store.APIKey{ID: uuid.NewString(), UserID: user, Name: "test key", Hash: hash, Prefix: prefix, ExpiresAt: expires}
	if err := e.Store.CreateAPIKey(context.Background(), k); err != nil {
		e.T.Fatalf("store api key: %v", err)
	}
	return secret
}

// Response is a finished response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
}

// Message returns the "message" of a GNS3-style error body.
func (r *Response) Message() string {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.Message
}

// Do sends a request with an Authorization header (none when authz is
// empty) and a body (a string, []byte, or anything JSON-encoded; nil for
// none).
func (e *Env) Do(method, path, authz string, body any) *Response {
	return e.DoT(e.T, method, path, authz, body)
}

// DoT is Do reporting failures to t (inside a fuzz target, say).
func (e *Env) DoT(t testing.TB, method, path, authz string, body any) *Response {
	t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, bodyReader(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// OpenURL sends a request to url with token as its bearer (none when
// empty), body as Do takes it and the header pairs given, and returns the
// response unread (a stream, say); its body is closed when the test ends.
func OpenURL(t testing.TB, method, url, token string, body any, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bodyReader(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// As sends a request as user (Bearer JWT).
func (e *Env) As(user, method, path string, body any) *Response {
	e.T.Helper()
	return e.Do(method, path, "Bearer "+e.Token(user), body)
}

func bodyReader(t testing.TB, body any) io.Reader {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	case []byte:
		return bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.NewReader(data)
	}
}
