// Package gns3 is a client of the GNS3 v3 controller REST API, acting with
// the caller's own bearer token, and the project directory that decides
// whether a project chat may run (the project exists, the user may see it,
// and it is opened).
package gns3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Errors of the client. Test them with errors.Is: a *StatusError matches
// ErrNotFound (404), ErrUnauthorized (401 and 403) and ErrForbidden (403).
var (
	// ErrNotFound: GNS3 answered 404.
	ErrNotFound = errors.New("gns3: not found")
	// ErrProjectNotFound: the project does not exist (or the caller may not
	// know it). Returned with ErrNotFound by project-level calls.
	ErrProjectNotFound = errors.New("gns3: project not found")
	// ErrUnauthorized: GNS3 rejected the token (401) or the access (403).
	ErrUnauthorized = errors.New("gns3: unauthorized")
	// ErrForbidden: GNS3 refused the access with 403.
	ErrForbidden = errors.New("gns3: forbidden")
	// ErrUnavailable: the controller could not be reached or its answer
	// could not be read.
	ErrUnavailable = errors.New("gns3: controller unavailable")
	// ErrInvalidID: an id is not a canonical UUID (GNS3 v3 ids are UUIDs);
	// no request is sent.
	ErrInvalidID = errors.New("gns3: invalid id")
	// ErrRedirect: the controller redirected a request to another origin
	// (another scheme, host or port: HTTPS to HTTP among them), which is
	// not followed, so that the caller's token goes nowhere else. Matched
	// together with ErrUnavailable.
	ErrRedirect = errors.New("gns3: redirect to another origin not followed")
)

// DefaultTimeout bounds a request when New is given no http.Client, and is
// the default per-call timeout (see WithCallTimeout).
const DefaultTimeout = 30 * time.Second

// Response size limits.
const (
	maxResponse = 32 << 20
	maxErrBody  = 64 << 10
	maxMessage  = 300
)

// StatusError is a non-2xx answer of the controller. It never contains the
// token.
type StatusError struct {
	Method     string
	Path       string
	StatusCode int
	// Message is GNS3's own error text ({"message": ...} or FastAPI's
	// {"detail": ...}), shortened; empty when the body had none.
	Message string
}

// Error describes the failed call.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("gns3 %s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is matches ErrNotFound, ErrUnauthorized and ErrForbidden by status code.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	}
	return false
}

// Client calls one GNS3 v3 controller. It holds no credential: every call
// takes the caller's bearer token. Safe for concurrent use.
type Client struct {
	base        string // scheme://host[:port][/prefix], no trailing slash
	hc          *http.Client
	callTimeout time.Duration // bound of one request; <= 0: none of ours
}

// Option configures a Client.
type Option func(*Client)

// WithCallTimeout bounds every request to d (DefaultTimeout by default):
// a request whose context has no deadline, or a later one, is given up
// after d with an error matching context.DeadlineExceeded. d <= 0 leaves
// requests bounded only by their context and the http.Client.
func WithCallTimeout(d time.Duration) Option {
	return func(c *Client) { c.callTimeout = d }
}

// MaxIdleConns is how many idle connections to the controller a transport
// of NewTransport keeps open: as many as the requests sent to it at once
// (a copilot turn reads a project's nodes and links at once, tools call
// in parallel, many users' turns run side by side), so that they are
// reused rather than dialled (over https, handshaken) again. Go's default
// transport keeps two per host.
const MaxIdleConns = 64

// NewTransport returns a transport for a controller's client: Go's default
// transport's settings (proxy from the environment, dial and TLS timeouts,
// HTTP/2 over TLS) with up to MaxIdleConns idle connections kept.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = MaxIdleConns
	t.MaxIdleConnsPerHost = MaxIdleConns
	return t
}

// New returns a client of the controller at baseURL (http or https, for
// example "http://127.0.0.1:3080"). httpClient nil means a client with
// DefaultTimeout over a NewTransport. Whatever httpClient's CheckRedirect, the client follows
// a redirect only within the controller's origin (same scheme, host and
// port; see ErrRedirect).
func New(baseURL string, httpClient *http.Client, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("gns3: base URL must be an http:// or https:// URL with a host and no query")
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultTimeout, Transport: NewTransport()}
	}
	// A copy shares the transport (its pool) and gets the redirect policy.
	hc := *httpClient
	hc.CheckRedirect = sameOriginRedirects(origin(u), httpClient.CheckRedirect)
	c := &Client{base: strings.TrimRight(u.String(), "/"), hc: &hc, callTimeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the controller URL the client calls.
func (c *Client) BaseURL() string { return c.base }

// CallTimeout returns the bound of one request (0: none of the client's).
func (c *Client) CallTimeout() time.Duration {
	if c.callTimeout < 0 {
		return 0
	}
	return c.callTimeout
}

// ValidID reports whether id is a canonical UUID, the form of every GNS3 v3 id.
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	_, err := uuid.Parse(id)
	return err == nil
}

// Do sends method path (for example "/v3/projects/<id>/nodes", the ids in
// it already validated) with the bearer token, in as JSON when not nil,
// and decodes a 2xx JSON answer into out when not nil. The request is
// bounded by the client's call timeout unless ctx ends sooner. A non-2xx
// answer is a *StatusError; no answer in time matches
// context.DeadlineExceeded; a transport failure or an unreadable answer
// wraps ErrUnavailable (or the context's error when ctx is done).
func (c *Client) Do(ctx context.Context, token, method, path string, in, out any) error {
	if c.callTimeout > 0 {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.callTimeout {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.callTimeout)
			defer cancel()
		}
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("gns3 %s %s: encode request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("gns3 %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("gns3 %s %s: %w", method, path, ctxErr)
		}
		if isTimeout(err) { // http.Client.Timeout
			return fmt.Errorf("gns3 %s %s: no answer in time: %w", method, path, context.DeadlineExceeded)
		}
		return fmt.Errorf("gns3 %s %s: %w", method, path, unavailable(transportReason(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Method: method, Path: path, StatusCode: resp.StatusCode, Message: errorMessage(resp.Body)}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
		return nil
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxResponse))
	if err := dec.Decode(out); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("gns3 %s %s: %w", method, path, ctxErr)
		}
		if isTimeout(err) {
			return fmt.Errorf("gns3 %s %s: no answer in time: %w", method, path, context.DeadlineExceeded)
		}
		return fmt.Errorf("gns3 %s %s: %w", method, path, &unavailableError{reason: "invalid JSON answer", cause: err})
	}
	return nil
}

// maxRedirects is how many same-origin redirects a request follows, as
// http.Client's default policy.
const maxRedirects = 10

// sameOriginRedirects is the redirect policy of a client of the controller
// at origin o: a redirect elsewhere (another scheme, host or port) is
// refused before any request goes there, so that the bearer token never
// leaves the controller nor goes over plain HTTP once it went over HTTPS;
// a redirect within the origin is followed as next would (nil: at most
// maxRedirects).
func sameOriginRedirects(o string, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if origin(req.URL) != o {
			return ErrRedirect
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// origin is scheme://host:port of u, lower case, the port explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// transportReason drops the URL from a *url.Error (it is already in our
// message) and keeps the cause.
func transportReason(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errorMessage extracts GNS3's error text from an error body.
func errorMessage(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrBody))
	var e struct {
		Message any `json:"message"`
		Detail  any `json:"detail"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	var msg string
	for _, v := range []any{e.Message, e.Detail} {
		if s, ok := v.(string); ok && s != "" {
			msg = s
			break
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return msg
}

// projectPath validates projectID and returns /v3/projects/{id}.
func projectPath(projectID string) (string, error) {
	if !ValidID(projectID) {
		return "", &invalidIDError{kind: "project", id: shorten(projectID)}
	}
	return "/v3/projects/" + projectID, nil
}

// itemPath validates projectID and itemID and returns
// /v3/projects/{p}/{collection}/{id}.
func itemPath(projectID, collection, kind, itemID string) (string, error) {
	p, err := projectPath(projectID)
	if err != nil {
		return "", err
	}
	if !ValidID(itemID) {
		return "", &invalidIDError{kind: kind, id: shorten(itemID)}
	}
	return p + "/" + collection + "/" + itemID, nil
}

func shorten(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// projectErr adds ErrProjectNotFound to a 404 of a project-level call.
func projectErr(projectID string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("project %s: %w: %w", projectID, ErrProjectNotFound, err)
	}
	return err
}

// itemErr adds ErrProjectNotFound to a 404 of a call below a project only
// when GNS3 says the project itself is missing ("Project ID ... doesn't
// exist"); a missing node, link or template stays a plain ErrNotFound.
func itemErr(projectID string, err error) error {
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound && strings.HasPrefix(se.Message, "Project ID ") {
		return fmt.Errorf("project %s: %w: %w", projectID, ErrProjectNotFound, err)
	}
	return err
}

// GetProject returns the project (GET /v3/projects/{id}). A 404 matches
// ErrProjectNotFound, a 401/403 ErrUnauthorized.
func (c *Client) GetProject(ctx context.Context, token, projectID string) (*Project, error) {
	p, err := projectPath(projectID)
	if err != nil {
		return nil, err
	}
	var out Project
	if err := c.Do(ctx, token, http.MethodGet, p, nil, &out); err != nil {
		return nil, projectErr(projectID, err)
	}
	return &out, nil
}

// GetNodes returns the project's nodes (GET /v3/projects/{id}/nodes).
func (c *Client) GetNodes(ctx context.Context, token, projectID string) ([]Node, error) {
	return ListNodes[Node](ctx, c, token, projectID)
}

// GetLinks returns the project's links (GET /v3/projects/{id}/links).
func (c *Client) GetLinks(ctx context.Context, token, projectID string) ([]Link, error) {
	return ListLinks[Link](ctx, c, token, projectID)
}

// ListNodes reads the project's nodes (GET /v3/projects/{id}/nodes) into
// T, a struct of the fields the caller needs (Node for all): the others
// are skipped, not decoded, which spares building a node's properties,
// most of its size.
func ListNodes[T any](ctx context.Context, c *Client, token, projectID string) ([]T, error) {
	return listProjectItems[T](ctx, c, token, projectID, "/nodes")
}

// ListLinks reads the project's links (GET /v3/projects/{id}/links) into
// T, as ListNodes does nodes (Link for all fields).
func ListLinks[T any](ctx context.Context, c *Client, token, projectID string) ([]T, error) {
	return listProjectItems[T](ctx, c, token, projectID, "/links")
}

// listProjectItems reads the list below the project at suffix into []T.
func listProjectItems[T any](ctx context.Context, c *Client, token, projectID, suffix string) ([]T, error) {
	p, err := projectPath(projectID)
	if err != nil {
		return nil, err
	}
	out := []T{}
	if err := c.Do(ctx, token, http.MethodGet, p+suffix, nil, &out); err != nil {
		return nil, projectErr(projectID, err)
	}
	return out, nil
}

// ProjectGone reports whether the controller says the project does not
// exist (404). It returns false with no error when the project exists, and
// an error (ErrUnauthorized, ErrUnavailable, ...) when it cannot tell.
func (c *Client) ProjectGone(ctx context.Context, token, projectID string) (bool, error) {
	_, err := c.GetProject(ctx, token, projectID)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, ErrProjectNotFound):
		return true, nil
	default:
		return false, err
	}
}
