// Package apikeys serves the API-key routes: a user creates long-lived
// keys ("ack_...") for clients that cannot refresh a JWT (Open WebUI,
// LibreChat, scripts), lists them and revokes them. A key is shown once, at
// creation; only its SHA-256 hash and a display prefix are stored. Keys work
// as "Authorization: Bearer ack_..." on every route (see package auth).
//
//	POST   /v3/access/users/{user_id}/api-keys            create → 201 KeyCreated
//	GET    /v3/access/users/{user_id}/api-keys            list   → 200 []Key (no secrets, with last use)
//	DELETE /v3/access/users/{user_id}/api-keys            revoke all → 200 {"revoked": n}
//	DELETE /v3/access/users/{user_id}/api-keys/{key_id}   revoke one → 204
//	PATCH  /v3/access/users/{user_id}/api-keys/{key_id}   change its limits → 200 Key
//
// A key may carry its own limits (LimitsRequest): max_parallel (turns at
// once, replacing MAX_TURNS_PER_USER for the key), rpm and tpm (requests
// and tokens per minute), enforced on /v1 on every instance.
//
// {user_id} is "me", the caller's own id or, with a GNS3 controller
// (Options.Users), the caller's GNS3 user_id (package userpath); any other
// user is 403. A caller authenticated by an API key may list and revoke
// keys but not create them (403), so that a leaked key cannot mint keys
// that outlive its revocation. Errors are GNS3-style {"message": "..."}.
package apikeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/httpapi/views"
	"agentchat/internal/store"

	"github.com/google/uuid"
)

// Route paths.
const (
	PathKeys = "/v3/access/users/{user_id}/api-keys"
	PathKey  = PathKeys + "/{key_id}"
)

// Me is the {user_id} that names the caller.
const Me = userpath.Me

// Limits and defaults.
const (
	// DefaultName names a key created without a name.
	DefaultName = "API key"
	// MaxNameLength bounds a key name (characters).
	MaxNameLength = 100
	// MaxExpiryDays bounds the lifetime of a key (about ten years).
	MaxExpiryDays = 3650
)

// Key statuses.
const (
	StatusActive  = "active"
	StatusRevoked = "revoked"
	StatusExpired = "expired"
)

// Options tune the handlers.
type Options struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// NewID returns a key id (nil: a random UUID).
	NewID func() string
	// Users resolves {user_id} (nil: "me" and the caller's id only).
	Users *userpath.Resolver
}

// Handlers serves the API-key routes.
type Handlers struct {
	keys store.APIKeys
	o    Options
}

// New returns the API-key handlers over keys.
func New(keys store.APIKeys, o Options) *Handlers {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = uuid.NewString
	}
	return &Handlers{keys: keys, o: o}
}

// Routes returns the API-key routes.
func (h *Handlers) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodPost, Path: PathKeys, Handler: httpapi.HandlerFunc(h.create).ServeHTTP},
		{Method: http.MethodGet, Path: PathKeys, Handler: httpapi.HandlerFunc(h.list).ServeHTTP},
		{Method: http.MethodDelete, Path: PathKeys, Handler: httpapi.HandlerFunc(h.revokeAll).ServeHTTP},
		{Method: http.MethodDelete, Path: PathKey, Handler: httpapi.HandlerFunc(h.revoke).ServeHTTP},
		{Method: http.MethodPatch, Path: PathKey, Handler: httpapi.HandlerFunc(h.setLimits).ServeHTTP},
	}
}

// CreateRequest is the body of POST .../api-keys (every field optional):
//
//	{"name": "open-webui", "expires_in_days": 90}
//	{"name": "ci", "expires_at": "2027-01-01T00:00:00Z"}
//
// name is 1..100 characters (default "API key"); expires_in_days (a JSON
// integer, 1..3650: 1.5 or "30" are refused) or expires_at (RFC 3339, in
// the future, within 3650 days) sets an expiry, not both; without either
// (or with null) the key never expires. Unknown fields are 422. An empty
// body (Content-Length: 0) creates a key with the defaults.
type CreateRequest struct {
	Name *string `json:"name"`
	// ExpiresInDays is kept as sent, so that a fractional number or a
	// string is told apart from a whole number (see days).
	ExpiresInDays json.RawMessage `json:"expires_in_days"`
	ExpiresAt     *string         `json:"expires_at"`
	LimitsRequest
}

// days reads expires_in_days: ok is false when it is absent or null; a
// value that is not a whole JSON number is a 422 "must be an integer"
// (30.0 and 3e1 are whole numbers). A whole number beyond int64 is
// clamped, so that it is refused as out of range.
func (req *CreateRequest) days() (d int64, ok bool, err error) {
	raw := bytes.TrimSpace(req.ExpiresInDays)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	notInt := httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'expires_in_days' must be an integer")
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false, notInt // a string, boolean, array or object
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true, nil
	}
	// Enough precision that a fraction of a number this long (a few
	// KiB at most) does not round to a whole number.
	f, _, err := big.ParseFloat(string(raw), 10, uint(4*len(raw)+64), big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return 0, false, notInt
	}
	n, _ := f.Int64() // clamped to the int64 range
	return n, true, nil
}

// KeyCreated is the answer to a creation: the only time Key is shown.
type KeyCreated struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Key       string  `json:"key"`
	Prefix    string  `json:"prefix"`
	CreatedAt string  `json:"created_at"`
	ExpiresAt *string `json:"expires_at"`
	Limits
}

// Key is a listed key (never its secret). LastUsedAt is the last recorded
// successful use (null: never); it is recorded at most once a minute per
// server process (auth.TouchInterval), so it may lag by that much.
type Key struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Prefix     string  `json:"prefix"`
	Status     string  `json:"status"`
	CreatedAt  string  `json:"created_at"`
	ExpiresAt  *string `json:"expires_at"`
	RevokedAt  *string `json:"revoked_at"`
	LastUsedAt *string `json:"last_used_at"`
	Limits
}

// msgOthersKeys refuses a {user_id} that is not the caller.
const msgOthersKeys = "You can only manage your own API keys (use 'me' as the user id)"

// owner returns the user whose keys the request manages: the caller, when
// {user_id} names them (see package userpath).
func (h *Handlers) owner(r *http.Request) (auth.Identity, error) {
	return h.o.Users.Caller(r, msgOthersKeys)
}

// validate checks a creation request; it returns the name and the expiry
// (zero: never).
func (req *CreateRequest) validate(now time.Time) (string, time.Time, error) {
	name := DefaultName
	if req.Name != nil {
		name = strings.TrimSpace(*req.Name)
		switch n := utf8.RuneCountInString(name); {
		case n == 0:
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'name' must not be blank")
		case n > MaxNameLength:
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'name' must be at most %d characters (got %d)", MaxNameLength, n)
		case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'name' must not contain control characters")
		}
	}
	limit := now.Add(MaxExpiryDays * 24 * time.Hour)
	d, hasDays, err := req.days()
	if err != nil {
		return "", time.Time{}, err
	}
	switch {
	case hasDays && req.ExpiresAt != nil:
		return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Give either 'expires_in_days' or 'expires_at', not both")
	case hasDays:
		if d < 1 || d > MaxExpiryDays {
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'expires_in_days' must be between 1 and %d", MaxExpiryDays)
		}
		return name, now.Add(time.Duration(d) * 24 * time.Hour), nil
	case req.ExpiresAt != nil:
		t, err := time.Parse(time.RFC3339, *req.ExpiresAt)
		if err != nil {
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'expires_at' must be an RFC 3339 time such as 2027-01-01T00:00:00Z")
		}
		if !t.After(now) {
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'expires_at' must be in the future")
		}
		if t.After(limit) {
			return "", time.Time{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'expires_at' must be within %d days", MaxExpiryDays)
		}
		return name, t.UTC(), nil
	}
	return name, time.Time{}, nil
}

func (h *Handlers) create(w http.ResponseWriter, r *http.Request) error {
	id, err := h.owner(r)
	if err != nil {
		return err
	}
	if id.Via == auth.ViaAPIKey {
		return httpapi.Errorf(http.StatusForbidden, "API keys cannot create API keys: sign in with your login token to create one")
	}
	var body CreateRequest
	if r.ContentLength != 0 { // no body: every field takes its default
		if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{DisallowUnknownFields: true, MaxBytes: 16 << 10}); err != nil {
			return err
		}
	}
	now := h.o.Now().UTC()
	name, expires, err := body.validate(now)
	if err != nil {
		return err
	}
	limits, err := body.LimitsRequest.apply(store.KeyLimits{})
	if err != nil {
		return err
	}
	secret, prefix, hash, err := auth.GenerateAPIKey()
	if err != nil {
		return err
	}
	k := &store.APIKey{ID: h.o.NewID(), UserID: id.UserID, Name: name, Hash: hash, Prefix: prefix, CreatedAt: now, ExpiresAt: expires,
		Limits: limits}
	// The store alone enforces the number of active keys of a user
	// (MAX_API_KEYS_PER_USER), atomically: a *store.LimitError is a 409
	// that says the limit and how to free room.
	if err := h.keys.CreateAPIKey(r.Context(), k); err != nil {
		if se := httpapi.LimitFailure(err); se != nil {
			return se
		}
		return fmt.Errorf("create api key: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "api key created", "key_id", k.ID, "prefix", k.Prefix)
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusCreated, KeyCreated{
		ID: k.ID, Name: k.Name, Key: secret, Prefix: k.Prefix,
		CreatedAt: views.Timestamp(k.CreatedAt), ExpiresAt: optTime(k.ExpiresAt), Limits: limitsOf(k.Limits),
	})
	return nil
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) error {
	id, err := h.owner(r)
	if err != nil {
		return err
	}
	keys, err := h.keys.ListAPIKeys(r.Context(), id.UserID)
	if err != nil {
		return fmt.Errorf("list api keys: %w", err)
	}
	now := h.o.Now()
	out := make([]Key, 0, len(keys))
	for i := range keys {
		out = append(out, keyOf(&keys[i], now))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handlers) revoke(w http.ResponseWriter, r *http.Request) error {
	id, err := h.owner(r)
	if err != nil {
		return err
	}
	keyID := r.PathValue("key_id")
	if err := httpapi.ValidateUUID("key_id", keyID); err != nil {
		return err
	}
	keyID = httpapi.NormalizeUUID(keyID)
	if err := h.keys.RevokeAPIKey(r.Context(), id.UserID, keyID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return httpapi.Errorf(http.StatusNotFound, "API key '%s' not found", keyID)
		}
		return fmt.Errorf("revoke api key: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "api key revoked", "key_id", keyID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// RevokedAll is the answer to DELETE .../api-keys.
type RevokedAll struct {
	Revoked int `json:"revoked"`
}

func (h *Handlers) revokeAll(w http.ResponseWriter, r *http.Request) error {
	id, err := h.owner(r)
	if err != nil {
		return err
	}
	keys, err := h.keys.ListAPIKeys(r.Context(), id.UserID)
	if err != nil {
		return fmt.Errorf("list api keys: %w", err)
	}
	n := 0
	for i := range keys {
		if !keys[i].RevokedAt.IsZero() {
			continue
		}
		err := h.keys.RevokeAPIKey(r.Context(), id.UserID, keys[i].ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("revoke api key: %w", err)
		}
		n++
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "api keys revoked", "count", n)
	httpapi.WriteJSON(w, http.StatusOK, RevokedAll{Revoked: n})
	return nil
}

// status is the state of k at now.
func status(k *store.APIKey, now time.Time) string {
	switch {
	case !k.RevokedAt.IsZero():
		return StatusRevoked
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return StatusExpired
	}
	return StatusActive
}

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := views.Timestamp(t)
	return &s
}

// keyOf is the listed form of k at now.
func keyOf(k *store.APIKey, now time.Time) Key {
	return Key{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, Status: status(k, now),
		CreatedAt: views.Timestamp(k.CreatedAt), ExpiresAt: optTime(k.ExpiresAt),
		RevokedAt: optTime(k.RevokedAt), LastUsedAt: optTime(k.LastUsed), Limits: limitsOf(k.Limits),
	}
}
