// Package httpapi builds agentchat's HTTP handler tree: routes on a
// net/http ServeMux, the middleware every route shares (request id, access
// log, panic recovery, CORS, authentication, the project check) and the JSON
// and error helpers of the API. Handlers for each surface live in
// subpackages and are mounted as Routes, so a Lambda function mounts only the
// routes it serves and the local server mounts them all.
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/auth"
	"agentchat/internal/idsyntax"
	"agentchat/internal/logctx"
	"agentchat/internal/telemetry"
)

// Authenticator turns an Authorization header into an identity.
type Authenticator interface {
	Authenticate(ctx context.Context, authorization string) (auth.Identity, error)
}

// ProjectChecker decides whether a user may chat in a project. Its refusals
// are Refusal errors (gns3.ProjectError) carrying the status and message
// to send.
type ProjectChecker interface {
	CheckProject(ctx context.Context, id auth.Identity, projectID string) error
}

// Route is one method + path served by a handler.
type Route struct {
	// Method and Path form the ServeMux pattern, e.g. "GET" and
	// "/v3/projects/{project_id}/chat/sessions".
	Method string
	Path   string
	// Handler serves the route.
	Handler http.HandlerFunc
	// Public routes skip authentication.
	Public bool
	// Project routes have a {project_id} the user must be allowed to chat
	// in; they are also served under the /v3/copilot/projects alias.
	Project bool
	// Style is the error body style of the route.
	Style ErrorStyle
}

// Pattern returns the ServeMux pattern of the route.
func (rt Route) Pattern() string { return rt.Method + " " + rt.Path }

// Paths returns the paths the route is served under (with the copilot
// alias for every path under /v3/projects/).
func (rt Route) Paths() []string {
	if strings.HasPrefix(rt.Path, projectPrefix) {
		return []string{rt.Path, copilotPrefix + strings.TrimPrefix(rt.Path, projectPrefix)}
	}
	return []string{rt.Path}
}

const (
	projectPrefix = "/v3/projects/"
	copilotPrefix = "/v3/copilot/projects/"
)

// Deps are what the shared middleware needs.
type Deps struct {
	Auth     Authenticator
	Projects ProjectChecker
	Logger   *slog.Logger
	// SingleUser is the local single-user mode, where no credential is
	// needed: the router then only serves requests addressed to a loopback
	// host and coming from no other origin than a loopback one, and allows
	// CORS for loopback origins only, so that no web page of another site
	// can drive the server (directly or by DNS rebinding).
	SingleUser bool
	// Tracer, when set, starts a server span per request (see traced);
	// nil: tracing off.
	Tracer trace.Tracer
	// Metrics, when set, counts open SSE streams and 409/429 refusals by
	// route (see metered); nil: not counted.
	Metrics *telemetry.Metrics
}

// NewRouter returns a handler serving routes with the shared middleware.
// ServeMux decides what an unserved request gets: a known path asked with
// another method 405 with Allow, an unknown path 404; the router only
// writes those answers in the route's error style (see refuse), and
// answers every OPTIONS request no route serves as a CORS preflight.
func NewRouter(d Deps, routes ...Route) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if _, ok := d.Logger.Handler().(*logctx.Handler); !ok {
		// Records logged with a request's context carry its request id
		// and user (see base and wrap), wherever they are logged from.
		d.Logger = slog.New(logctx.NewHandler(d.Logger.Handler()))
	}
	// mux serves the routes, and "/" (which matches only what no route
	// does) refuses; routesOnly, the same patterns without "/", tells a
	// refusal 404 from 405, so a served request is matched once.
	mux, routesOnly := http.NewServeMux(), http.NewServeMux()
	for _, rt := range routes {
		h := d.wrap(rt)
		for _, p := range rt.Paths() {
			mux.Handle(rt.Method+" "+p, h)
			routesOnly.Handle(rt.Method+" "+p, http.NotFoundHandler())
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			d.preflight(w, r)
			return
		}
		refuse(w, r, routesOnly)
	})
	return d.base(d.traced(d.metered(mux)))
}

// refuse answers a request no route serves as routes would (404, or 405
// with the Allow header ServeMux computes from the routes of the path),
// with a body in the style of the path's surface.
func refuse(w http.ResponseWriter, r *http.Request, routes *http.ServeMux) {
	h, _ := routes.Handler(r)
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	refuseUnread(w, r)
	r = r.WithContext(WithStyle(r.Context(), styleOfPath(r.URL.Path)))
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		Error(w, r, http.StatusMethodNotAllowed, "Method "+r.Method+" not allowed; use "+allow)
		return
	}
	Error(w, r, http.StatusNotFound, "Not found")
}

// headerProbe records the status and headers of mux's own refusal,
// dropping its plain-text body.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }

func (p *headerProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

func (p *headerProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

func styleOfPath(p string) ErrorStyle {
	if strings.HasPrefix(p, "/v1/") || p == "/v1" {
		return StyleOpenAI
	}
	return StyleGNS3
}

// base adds request id, access log, recovery and CORS around everything.
func (d Deps) base(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := requestID(r.Header.Get("X-Request-Id"))
		w.Header().Set("X-Request-Id", rid)
		log := d.Logger
		ctx := WithLogger(logctx.With(r.Context(), slog.String("request_id", rid)), log)
		rec := &statusRecorder{ResponseWriter: w}
		if d.SingleUser {
			if msg := localOnly(r); msg != "" {
				log.WarnContext(ctx, "refused a request not addressed from and to loopback", "host", truncate(r.Host, 64), "origin", truncate(r.Header.Get("Origin"), 64))
				refuseUnread(rec, r)
				Error(rec, r.WithContext(WithStyle(ctx, styleOfPath(r.URL.Path))), http.StatusForbidden, msg)
				log.InfoContext(ctx, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status(), "duration_ms", time.Since(start).Milliseconds())
				return
			}
			if o := r.Header.Get("Origin"); o != "" {
				// A page served from this machine (a local web UI).
				corsFor(w.Header(), o)
			}
		} else {
			cors(w.Header())
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.ErrorContext(ctx, "handler panic", "panic", fmt.Sprint(p), "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
				if !rec.wrote {
					// In the shape of the route's surface (an OpenAI error on /v1).
					Error(rec, r.WithContext(WithStyle(ctx, styleOfPath(r.URL.Path))), http.StatusInternalServerError, "Internal server error")
				}
			}
			log.InfoContext(ctx, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status(), "duration_ms", time.Since(start).Milliseconds())
		}()
		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// wrap adds the route's style, authentication and project check.
func (d Deps) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := WithStyle(r.Context(), rt.Style)
		r = r.WithContext(ctx)
		if !rt.Public {
			if d.Auth == nil {
				Error(w, r, http.StatusInternalServerError, "Authentication is not configured")
				return
			}
			// Authentication comes before the handler reads the body: a
			// caller without a valid credential never makes the server
			// wait for (or read) what it declared.
			id, err := d.Auth.Authenticate(ctx, r.Header.Get("Authorization"))
			var credErr auth.CredentialError
			switch {
			case errors.As(err, &credErr):
				// The sentinel's own text (ErrNoCredentials,
				// ErrInvalidCredentials, ErrNotAccessToken), never the
				// log-only reason wrapped around it.
				refuseUnread(w, r)
				Error(w, r, http.StatusUnauthorized, credErr.Error())
				return
			case err != nil:
				Fail(w, r, fmt.Errorf("authenticate: %w", err))
				return
			}
			ctx = auth.WithIdentity(ctx, id)
			ctx = logctx.With(ctx, slog.String("user", id.UserID))
			r = r.WithContext(ctx)
			if rt.Project {
				if err := d.checkProject(r, id); err != nil {
					refuseUnread(w, r)
					Fail(w, r, err)
					return
				}
			}
		}
		rt.Handler(w, r)
	})
}

// refuseUnread prepares the refusal of a request whose body is left
// unread (a failed authentication, an unknown route...): on HTTP/1.x it
// asks for the connection to be closed after the answer. net/http would
// otherwise first try to read and discard the declared body, so a client
// that declares a body and never sends it would get its refusal only when
// the read deadline ends that wait. Only a request read by a net/http
// server (which records the local address) has such a connection: a
// Lambda request, built from a whole event, gets no such header.
func refuseUnread(w http.ResponseWriter, r *http.Request) {
	if _, served := r.Context().Value(http.LocalAddrContextKey).(net.Addr); !served {
		return
	}
	if r.ProtoMajor == 1 && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}

func (d Deps) checkProject(r *http.Request, id auth.Identity) error {
	pid := r.PathValue("project_id")
	if pid == "" {
		return nil
	}
	if err := ValidateProjectID(pid); err != nil {
		return err
	}
	if d.Projects == nil {
		return nil
	}
	err := d.Projects.CheckProject(r.Context(), id, pid)
	if err == nil {
		return nil
	}
	var rf Refusal
	if errors.As(err, &rf) {
		status, msg := rf.Refusal()
		if cause := errors.Unwrap(rf); cause != nil {
			Logger(r.Context()).WarnContext(r.Context(), "project check refused", "project_id", pid, "status", status, "cause", cause.Error())
		}
		return &StatusError{Status: status, Message: msg}
	}
	return fmt.Errorf("check project %s: %w", pid, err)
}

// idChars are the bytes of a plain id after its first (a letter or digit).
var idChars = idsyntax.NewSet(true, "_.-")

// ValidateProjectID accepts GNS3 project ids (UUIDs) and other plain ids of
// at most 128 letters, digits, '-', '_' and '.'.
func ValidateProjectID(id string) error {
	if !idsyntax.Plain(id, idChars, 128) {
		return Errorf(http.StatusUnprocessableEntity, "Invalid project_id: %q", truncate(id, 64))
	}
	return nil
}

// ValidateUUID returns a 422 *StatusError unless s is a UUID.
func ValidateUUID(name, s string) error {
	if !idsyntax.UUID(s) {
		return Errorf(http.StatusUnprocessableEntity, "Invalid %s: must be a UUID", name)
	}
	return nil
}

// NormalizeUUID lower-cases a valid UUID.
func NormalizeUUID(s string) string { return strings.ToLower(s) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// allowHeaders are the request headers a preflight allows when the browser
// names none.
const allowHeaders = "Authorization, Content-Type, X-Request-Id, OpenAI-Organization, OpenAI-Project, OpenAI-Beta, X-Stainless-Lang, X-Stainless-Package-Version, X-Stainless-OS, X-Stainless-Arch, X-Stainless-Runtime, X-Stainless-Runtime-Version, X-Stainless-Retry-Count, X-Stainless-Timeout, X-Stainless-Helper-Method, Last-Event-ID"

// requestedHeaders matches a well-formed Access-Control-Request-Headers.
// (Compiled on the first preflight: most processes never answer one.)
var requestedHeaders = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_|~-]+)*$`)
})

// The headers the browser asks for are
// allowed as asked (SDKs add new X-Stainless-* headers over time, and a
// single missing one blocks the request): credentials travel in the
// Authorization header, never in cookies, so no header is sensitive here.
// preflight answers a CORS preflight (with no CORS headers in single-user
// mode, which makes browsers refuse the cross-origin request).
func (d Deps) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") == "" {
		// Single-user mode without an origin: nothing to allow.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
	allow := allowHeaders
	if req := strings.TrimSpace(r.Header.Get("Access-Control-Request-Headers")); req != "" && len(req) <= 2048 && requestedHeaders().MatchString(req) {
		allow = req
	}
	h.Set("Access-Control-Allow-Headers", allow)
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

// exposeHeaders are the response headers browsers may read.
const exposeHeaders = "X-Request-Id, X-Next-Cursor, X-Session-Id, X-Turn-Id, X-Agent-Id, x-should-retry, Retry-After"

// cors allows every origin: credentials travel in the Authorization
// header, never in cookies.
func cors(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", exposeHeaders)
}

// corsFor allows one origin (single-user mode: a page of this machine).
func corsFor(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", exposeHeaders)
}

// requestID keeps an incoming X-Request-Id of 8 to 128 letters, digits,
// '.', '_' and '-', else makes one.
func requestID(incoming string) string {
	if idChars.All(incoming, 8, 128) {
		return incoming
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusRecorder remembers the status written, for the access log, and
// passes Flush and Unwrap through so streaming still works.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.code, s.wrote = http.StatusOK, true
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) status() int {
	if !s.wrote {
		return http.StatusOK
	}
	return s.code
}

// Select returns the routes whose pattern ("METHOD /path") is in patterns,
// in the order of patterns, or an error naming a pattern no route has (a
// wiring mistake, reported at start).
func Select(routes []Route, patterns ...string) ([]Route, error) {
	out := make([]Route, 0, len(patterns))
	for _, p := range patterns {
		i := slices.IndexFunc(routes, func(rt Route) bool { return rt.Pattern() == p })
		if i < 0 {
			return nil, fmt.Errorf("no route %q among the routes built", p)
		}
		out = append(out, routes[i])
	}
	return out, nil
}

// localOnly returns why r may not be served in single-user mode: a Host
// that is not loopback (a DNS-rebinding page), or an Origin that is not
// loopback (another web site); "" when it may.
func localOnly(r *http.Request) string {
	if !loopbackHost(r.Host) {
		return "Single-user mode serves only requests addressed to localhost or a loopback address"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !loopbackHost(u.Host) {
			return "Single-user mode refuses requests from other web sites"
		}
	}
	return ""
}

// loopbackHost reports whether hostport names localhost or a loopback IP.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
