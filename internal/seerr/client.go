// Package seerr is a client of the Overseerr/Jellyseerr ("Seerr") v1 API:
// search, title details, requests and trending titles. The media agent's
// tools on it are package seerrtools; its fake server is seerrtest. The API
// key travels only in the X-Api-Key header; it never appears in an error or
// a tool output.
package seerr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrNotConfigured is returned by every call when no Seerr URL is configured.
//
//lint:ignore ST1005 shown as-is to users and models; Seerr is a product name.
var ErrNotConfigured = errors.New("Seerr is not configured")

// Sentinel errors matched by *APIError through errors.Is.
var (
	// ErrUnauthorized: Seerr rejected the API key (401) or the user lacks
	// permission (403).
	ErrUnauthorized = errors.New("seerr: unauthorized")
	// ErrNotFound: the title or request does not exist (404).
	ErrNotFound = errors.New("seerr: not found")
	// ErrAlreadyRequested: a request for the title (or every asked season)
	// already exists (409, or 202 "No seasons available to request").
	ErrAlreadyRequested = errors.New("seerr: already requested")
)

// maxBody bounds the size of a Seerr response read into memory.
const maxBody = 8 << 20

// APIError is a non-success answer of the Seerr API.
type APIError struct {
	// Op names the call ("search", "movie 603", ...).
	Op string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is Seerr's own message, if any, with the API key redacted.
	Message string
}

// Error describes the failure for a person or a model.
func (e *APIError) Error() string {
	var hint string
	switch {
	case e.StatusCode == http.StatusUnauthorized:
		hint = "the API key was rejected (check SEERR_API_KEY)"
	case e.StatusCode == http.StatusForbidden:
		hint = "access denied (check SEERR_API_KEY and the Seerr user's permissions)"
	case e.StatusCode == http.StatusNotFound:
		hint = "not found"
	case e.StatusCode == http.StatusConflict || e.StatusCode == http.StatusAccepted:
		hint = "already requested"
	case e.StatusCode >= 300 && e.StatusCode < 400:
		hint = "redirected (set SEERR_URL to the final address of Seerr)"
	case e.StatusCode >= 500:
		hint = "Seerr server error"
	}
	msg := fmt.Sprintf("seerr %s: HTTP %d", e.Op, e.StatusCode)
	if hint != "" {
		msg += ", " + hint
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Is matches ErrUnauthorized, ErrNotFound and ErrAlreadyRequested.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrAlreadyRequested:
		return e.StatusCode == http.StatusConflict || e.StatusCode == http.StatusAccepted
	}
	return false
}

// Config configures a Client.
type Config struct {
	// BaseURL is SEERR_URL, e.g. http://seerr:5055 (a trailing /api/v1 is
	// accepted). Empty: the client is not configured.
	BaseURL string
	// APIKey is SEERR_API_KEY, sent as X-Api-Key.
	APIKey string
	// HTTPClient performs the calls; nil: a client with a 30 s timeout that
	// does not follow redirects (so the key never goes to another host).
	HTTPClient *http.Client
}

// Client calls the Seerr v1 API. A nil or unconfigured Client returns
// ErrNotConfigured from every call. It is safe for concurrent use.
type Client struct {
	base    *url.URL // scheme://host[/prefix], without /api/v1
	display string   // base for messages, without credentials
	key     string
	hc      *http.Client
}

// New returns a client for cfg. An empty BaseURL gives a client whose calls
// return ErrNotConfigured; a malformed one is an error.
func New(cfg Config) (*Client, error) {
	c := &Client{key: cfg.APIKey, hc: cfg.HTTPClient}
	if c.hc == nil {
		c.hc = &http.Client{
			Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	raw := strings.TrimSpace(cfg.BaseURL)
	if raw == "" {
		return c, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse SEERR_URL: invalid URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("parse SEERR_URL: want http(s)://host[:port][/path], got scheme %q host %q", u.Scheme, u.Host)
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/api/v1")
	u.RawPath = ""
	c.base = u
	shown := *u
	shown.User = nil
	c.display = shown.String()
	return c, nil
}

// Configured reports whether the client has a Seerr URL.
func (c *Client) Configured() bool { return c != nil && c.base != nil }

// Search searches movies, shows and people (GET /api/v1/search). page < 1
// means 1; language may be empty.
func (c *Client) Search(ctx context.Context, query string, page int, language string) (*Page, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, fmt.Errorf("seerr search: empty query")
	}
	q := []string{"query", query, "page", strconv.Itoa(max(page, 1))}
	if language != "" {
		q = append(q, "language", language)
	}
	var out Page
	if _, err := c.get(ctx, "search", "/search", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Trending returns trending movies and shows (GET /api/v1/discover/trending).
func (c *Client) Trending(ctx context.Context, page int, language string) (*Page, error) {
	q := []string{"page", strconv.Itoa(max(page, 1))}
	if language != "" {
		q = append(q, "language", language)
	}
	var out Page
	if _, err := c.get(ctx, "trending", "/discover/trending", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Movie returns the details of a movie by TMDB id (GET /api/v1/movie/{id}).
func (c *Client) Movie(ctx context.Context, tmdbID int) (*Movie, error) {
	op := "movie " + strconv.Itoa(tmdbID)
	if tmdbID <= 0 {
		return nil, fmt.Errorf("seerr %s: invalid tmdb id", op)
	}
	var out Movie
	if _, err := c.get(ctx, op, "/movie/"+strconv.Itoa(tmdbID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TV returns the details of a show by TMDB id (GET /api/v1/tv/{id}).
func (c *Client) TV(ctx context.Context, tmdbID int) (*TV, error) {
	op := "tv " + strconv.Itoa(tmdbID)
	if tmdbID <= 0 {
		return nil, fmt.Errorf("seerr %s: invalid tmdb id", op)
	}
	var out TV
	if _, err := c.get(ctx, op, "/tv/"+strconv.Itoa(tmdbID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Requests lists requests (GET /api/v1/request).
func (c *Client) Requests(ctx context.Context, rq RequestQuery) (*RequestPage, error) {
	if !validFilter(rq.Filter) {
		return nil, fmt.Errorf("seerr requests: invalid filter %q", rq.Filter)
	}
	if rq.Sort != "" && rq.Sort != "added" && rq.Sort != "modified" {
		return nil, fmt.Errorf("seerr requests: invalid sort %q (want added or modified)", rq.Sort)
	}
	if rq.Take < 0 || rq.Skip < 0 {
		return nil, fmt.Errorf("seerr requests: negative take or skip")
	}
	var q []string
	if rq.Take > 0 {
		q = append(q, "take", strconv.Itoa(rq.Take))
	}
	if rq.Skip > 0 {
		q = append(q, "skip", strconv.Itoa(rq.Skip))
	}
	if rq.Filter != "" {
		q = append(q, "filter", rq.Filter)
	}
	if rq.Sort != "" {
		q = append(q, "sort", rq.Sort)
	}
	var out RequestPage
	if _, err := c.get(ctx, "requests", "/request", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateRequest places a request (POST /api/v1/request). When Seerr answers
// that the title or every asked season is already requested, the error
// matches ErrAlreadyRequested.
func (c *Client) CreateRequest(ctx context.Context, nr NewRequest) (*Request, error) {
	op := "request " + nr.MediaType + " " + strconv.Itoa(nr.MediaID)
	if err := nr.validate(); err != nil {
		return nil, fmt.Errorf("seerr %s: %w", op, err)
	}
	body, err := json.Marshal(nr)
	if err != nil {
		return nil, fmt.Errorf("seerr %s: encode body: %w", op, err)
	}
	status, data, err := c.do(ctx, op, http.MethodPost, "/request", nil, body)
	if err != nil {
		return nil, err
	}
	if status == http.StatusAccepted {
		// "No seasons available to request": nothing was created.
		return nil, &APIError{Op: op, StatusCode: status, Message: c.message(data)}
	}
	var out Request
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("seerr %s: decode response: %w", op, err)
	}
	return &out, nil
}

// get performs a GET and decodes the JSON answer into out.
func (c *Client) get(ctx context.Context, op, path string, query []string, out any) (int, error) {
	status, data, err := c.do(ctx, op, http.MethodGet, path, query, nil)
	if err != nil {
		return status, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return status, fmt.Errorf("seerr %s: decode response: %w", op, err)
	}
	return status, nil
}

// do calls the API and returns the status and body of a 2xx answer.
func (c *Client) do(ctx context.Context, op, method, path string, query []string, body []byte) (int, []byte, error) {
	if !c.Configured() {
		return 0, nil, ErrNotConfigured
	}
	u := *c.base
	u.Path = c.base.Path + "/api/v1" + path
	u.RawQuery = encodeQuery(query)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, nil, fmt.Errorf("seerr %s: build request: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("X-Api-Key", c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, nil, fmt.Errorf("seerr %s: %w", op, ctxErr)
		}
		cause := err
		var ue *url.Error
		if errors.As(err, &ue) {
			cause = ue.Err
		}
		return 0, nil, fmt.Errorf("seerr %s: cannot reach Seerr at %s: %s", op, c.display, c.redact(cause.Error()))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("seerr %s: read response: %s", op, c.redact(err.Error()))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, nil, &APIError{Op: op, StatusCode: resp.StatusCode, Message: c.message(data)}
	}
	if len(data) > maxBody {
		return resp.StatusCode, nil, fmt.Errorf("seerr %s: response larger than %d bytes", op, maxBody)
	}
	return resp.StatusCode, data, nil
}

// message extracts Seerr's error message ({"message"} or {"error"}) or a
// short plain-text body, with the API key redacted.
func (c *Client) message(data []byte) string {
	var m struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	text := ""
	if json.Unmarshal(data, &m) == nil {
		text = m.Message
		if text == "" {
			text = m.Error
		}
	} else if t := strings.TrimSpace(string(data)); t != "" && !strings.HasPrefix(t, "<") {
		text = t
	}
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	return c.redact(text)
}

// redact removes the API key from s.
func (c *Client) redact(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}

// encodeQuery encodes key/value pairs, percent-encoding every byte outside
// the RFC 3986 unreserved set: Seerr rejects '+' and reserved characters in
// query values ("must be url encoded").
func encodeQuery(kv []string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(escape(kv[i]))
		b.WriteByte('=')
		b.WriteString(escape(kv[i+1]))
	}
	return b.String()
}

func escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z') || ('0' <= ch && ch <= '9') ||
			ch == '-' || ch == '_' || ch == '.' || ch == '~' {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}
