package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/logctx"
)

type fakeAuth struct{ err error }

func (f fakeAuth) Authenticate(ctx context.Context, h string) (auth.Identity, error) {
	if f.err != nil {
		return auth.Identity{}, f.err
	}
	return auth.Identity{UserID: "alice", Via: auth.ViaJWT}, nil
}

func routes(logged *[]string) []httpapi.Route {
	ok := func(w http.ResponseWriter, r *http.Request) {
		slog.New(logctx.NewHandler(slog.NewJSONHandler(writerFunc(func(b []byte) { *logged = append(*logged, string(b)) }), nil))).InfoContext(r.Context(), "handled")
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"path": r.URL.Path})
	}
	return []httpapi.Route{
		{Method: http.MethodGet, Path: "/v3/projects/{project_id}/chat/sessions", Handler: ok, Project: true},
		{Method: http.MethodDelete, Path: "/v3/projects/{project_id}/chat", Handler: ok, Public: true},
		{Method: http.MethodGet, Path: "/v1/models", Handler: ok, Style: httpapi.StyleOpenAI},
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

func serve(d httpapi.Deps, req *http.Request) *httptest.ResponseRecorder {
	var logged []string
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	rec := httptest.NewRecorder()
	httpapi.NewRouter(d, routes(&logged)...).ServeHTTP(rec, req)
	return rec
}

func TestRouting(t *testing.T) {
	jwt := httpapi.Deps{Auth: fakeAuth{}}
	tests := []struct {
		name, method, path string
		status             int
		body, allow        string
	}{
		{"route", "GET", "/v3/projects/p1/chat/sessions", 200, `"path"`, ""},
		{"copilot alias", "GET", "/v3/copilot/projects/p1/chat/sessions", 200, `"path"`, ""},
		{"copilot alias of a public route", "DELETE", "/v3/copilot/projects/p1/chat", 200, `"path"`, ""},
		// ServeMux computes Allow: a GET route serves HEAD too.
		{"wrong method", "POST", "/v3/projects/p1/chat/sessions", 405, `{"message":"Method POST not allowed; use GET, HEAD"}`, "GET, HEAD"},
		{"wrong method on /v1 is OpenAI-shaped", "DELETE", "/v1/models", 405, `"type":"invalid_request_error"`, "GET, HEAD"},
		{"wrong method on the copilot alias", "PUT", "/v3/copilot/projects/p1/chat/sessions", 405, `{"message":"Method PUT not allowed; use GET, HEAD"}`, "GET, HEAD"},
		{"unknown path", "GET", "/nope", 404, `{"message":"Not found"}`, ""},
		{"unknown /v1 path", "GET", "/v1/nope", 404, `"type":"not_found_error"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(jwt, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.body) || rec.Header().Get("Allow") != tc.allow {
				t.Fatalf("%s %s: %d %s (Allow %q)", tc.method, tc.path, rec.Code, rec.Body, rec.Header().Get("Allow"))
			}
		})
	}
}

func TestAuthFailureKinds(t *testing.T) {
	tests := []struct {
		err    error
		status int
		body   string
	}{
		{auth.ErrNoCredentials, 401, "Not authenticated"},
		{errors.Join(auth.ErrInvalidCredentials, errors.New("token expired")), 401, "Could not validate credentials"},
		// A refresh token says why it is refused.
		{fmt.Errorf("%w (%w): jwt: type claim", auth.ErrNotAccessToken, auth.ErrInvalidCredentials), 401, "only access tokens are accepted"},
		{errors.New("api key store: connection refused"), 500, "Internal server error"},
	}
	for _, tc := range tests {
		rec := serve(httpapi.Deps{Auth: fakeAuth{err: tc.err}}, httptest.NewRequest("GET", "/v3/projects/p1/chat/sessions", nil))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.body) || strings.Contains(rec.Body.String(), "connection refused") {
			t.Errorf("%v: %d %s", tc.err, rec.Code, rec.Body)
		}
	}
}

func TestSingleUserServesOnlyLoopback(t *testing.T) {
	single := httpapi.Deps{Auth: fakeAuth{}, SingleUser: true}
	tests := []struct {
		name, host, origin string
		status             int
	}{
		{"loopback", "127.0.0.1:8080", "", 200},
		{"localhost", "localhost:8080", "", 200},
		{"ipv6 loopback", "[::1]:8080", "", 200},
		{"loopback origin", "127.0.0.1:8080", "http://localhost:3000", 200},
		{"rebound host", "evil.example:8080", "", 403},
		{"lan address", "192.168.1.20:8080", "", 403},
		{"other site", "127.0.0.1:8080", "https://evil.example", 403},
		{"opaque origin", "127.0.0.1:8080", "null", 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/v3/projects/p1/chat/sessions", nil)
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			rec := serve(single, req)
			if rec.Code != tc.status {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			want := ""
			if tc.status == 200 {
				want = tc.origin // a loopback page may read; no one else
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != want {
				t.Fatalf("Access-Control-Allow-Origin = %q, want %q", got, want)
			}
		})
	}
	for origin, allowed := range map[string]bool{"http://localhost:5173": true, "https://evil.example": false} {
		pre := httptest.NewRequest("OPTIONS", "/v3/projects/p1/chat/sessions", nil)
		pre.Host = "127.0.0.1:8080"
		pre.Header.Set("Origin", origin)
		pre.Header.Set("Access-Control-Request-Headers", "content-type")
		rec := serve(single, pre)
		if got := rec.Header().Get("Access-Control-Allow-Headers") != ""; got != allowed {
			t.Fatalf("preflight from %s: allowed=%v (%d %v)", origin, got, rec.Code, rec.Header())
		}
	}
}

func TestCORSInJWTMode(t *testing.T) {
	jwt := httpapi.Deps{Auth: fakeAuth{}}
	req := httptest.NewRequest("OPTIONS", "/v1/models", nil)
	req.Header.Set("Origin", "https://chat.example")
	req.Header.Set("Access-Control-Request-Headers", "authorization, x-stainless-new-header")
	rec := serve(jwt, req)
	if rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Origin") != "*" || rec.Header().Get("Access-Control-Allow-Headers") != "authorization, x-stainless-new-header" {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	rec = serve(jwt, httptest.NewRequest("GET", "/v1/models", nil))
	if rec.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Fatalf("response headers: %v", rec.Header())
	}
}

func TestRequestIDReachesContextLogs(t *testing.T) {
	var logged []string
	var buf bytes.Buffer
	req := httptest.NewRequest("GET", "/v3/projects/p1/chat/sessions", nil)
	req.Header.Set("X-Request-Id", "req-0123456789")
	rec := httptest.NewRecorder()
	httpapi.NewRouter(httpapi.Deps{Auth: fakeAuth{}, Logger: slog.New(slog.NewJSONHandler(&buf, nil))}, routes(&logged)...).ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") != "req-0123456789" {
		t.Fatalf("request id header %q", rec.Header().Get("X-Request-Id"))
	}
	if strings.Count(buf.String(), `"request_id"`) != 1 || !strings.Contains(buf.String(), `"request_id":"req-0123456789"`) {
		t.Fatalf("access log must carry the request id exactly once: %s", buf.String())
	}
	if len(logged) != 1 || !strings.Contains(logged[0], `"request_id":"req-0123456789"`) || !strings.Contains(logged[0], `"user":"alice"`) {
		t.Fatalf("a handler's context log lacks the request id or user: %v", logged)
	}
}

// TestRefusalClosesOnlyServedConnections: a request refused before its
// body is read asks for its connection to be closed when a net/http
// server read it (the local server), and not when it has no connection
// (a Lambda request built from a whole event).
func TestRefusalClosesOnlyServedConnections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		served bool
		body   string
		want   string
	}{
		{"served, body declared", true, `{"message":"hi"}`, "close"},
		{"served, no body", true, "", ""},
		{"lambda, body declared", false, `{"message":"hi"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/v3/projects/p1/chat/sessions", strings.NewReader(tc.body))
			if tc.served {
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
			}
			rec := serve(httpapi.Deps{Auth: fakeAuth{err: auth.ErrNoCredentials}}, req)
			if rec.Code != http.StatusUnauthorized || rec.Header().Get("Connection") != tc.want {
				t.Fatalf("got %d with Connection %q, want 401 with %q", rec.Code, rec.Header().Get("Connection"), tc.want)
			}
		})
	}
}
