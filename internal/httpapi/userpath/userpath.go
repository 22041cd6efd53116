// Package userpath resolves the {user_id} of the user-scoped routes
// (/v3/access/users/{user_id}/...): it names the caller when it is "me",
// the caller's own id (the token's sub) or, with a GNS3 controller, the
// caller's GNS3 user_id (the UUID the GNS3 web UI puts in its paths, which
// differs from the sub of GNS3 tokens: their username). The GNS3 user of a
// token is asked once (GET /v3/access/users/me, with the caller's token)
// and remembered for a short time, keyed by a hash of the token.
package userpath

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
)

// Me is the {user_id} that names the caller.
const Me = "me"

// Defaults of the cache of GNS3 users.
const (
	// DefaultTTL is how long the GNS3 user of a token is remembered.
	DefaultTTL = 60 * time.Second
	// DefaultMaxEntries bounds the cache; past it, expired entries are
	// swept and, if it is still full, it is emptied.
	DefaultMaxEntries = 10000
)

// Option configures a Resolver.
type Option func(*Resolver)

// WithTTL sets how long the GNS3 user of a token is remembered (<= 0: not
// at all).
func WithTTL(d time.Duration) Option { return func(r *Resolver) { r.ttl = d } }

// WithMaxEntries bounds the cache (<= 0: DefaultMaxEntries).
func WithMaxEntries(n int) Option { return func(r *Resolver) { r.max = n } }

// WithClock sets the clock of the cache (tests).
func WithClock(now func() time.Time) Option { return func(r *Resolver) { r.now = now } }

// Resolver checks that a {user_id} names the caller. A nil *Resolver, or
// one without a GNS3 client, accepts "me" and the caller's id only. Safe
// for concurrent use.
type Resolver struct {
	client *gns3.Client
	ttl    time.Duration
	max    int
	now    func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]entry
}

type entry struct {
	user    gns3.User
	expires time.Time
}

// New returns a resolver asking client (nil: no GNS3 controller) for the
// GNS3 user of a token.
func New(client *gns3.Client, opts ...Option) *Resolver {
	r := &Resolver{client: client, ttl: DefaultTTL, max: DefaultMaxEntries, now: time.Now, cache: map[[sha256.Size]byte]entry{}}
	for _, o := range opts {
		o(r)
	}
	if r.max <= 0 {
		r.max = DefaultMaxEntries
	}
	return r
}

// GNS3Configured reports whether the resolver asks a GNS3 controller.
func (r *Resolver) GNS3Configured() bool { return r != nil && r.client != nil }

// ErrNoController is returned by GNS3User when no controller is configured.
var ErrNoController = errors.New("userpath: no GNS3 controller configured")

// GNS3User returns the GNS3 user of the caller's token (cached). Without a
// controller it returns ErrNoController; a token the controller refuses
// gives an error matching gns3.ErrUnauthorized; an unreachable controller
// gns3.ErrUnavailable (or a deadline).
func (r *Resolver) GNS3User(ctx context.Context, id auth.Identity) (*gns3.User, error) {
	if !r.GNS3Configured() {
		return nil, ErrNoController
	}
	if id.Token == "" {
		return nil, fmt.Errorf("no token to ask the GNS3 controller with: %w", gns3.ErrUnauthorized)
	}
	k := keyOf(id)
	if u, ok := r.cached(k); ok {
		return &u, nil
	}
	u, err := r.client.Me(ctx, id.Token)
	if err != nil {
		return nil, err
	}
	if !gns3.ValidID(strings.ToLower(u.UserID)) {
		return nil, fmt.Errorf("gns3 GET /v3/access/users/me: user_id %q is not a UUID: %w", truncate(u.UserID, 64), gns3.ErrUnavailable)
	}
	u.UserID = strings.ToLower(u.UserID)
	r.remember(k, *u)
	return u, nil
}

// Check returns nil when pathUserID names the caller id: "me", id.UserID,
// or (with a controller) the caller's GNS3 user_id. Otherwise it returns a
// *httpapi.StatusError: 403 with forbidden as its message for another
// user, 502 when the controller cannot be asked. A context error is
// returned as it is.
func (r *Resolver) Check(ctx context.Context, id auth.Identity, pathUserID, forbidden string) error {
	if pathUserID == Me || (pathUserID != "" && pathUserID == id.UserID) {
		return nil
	}
	if !r.GNS3Configured() || !gns3.ValidID(strings.ToLower(pathUserID)) {
		return httpapi.Errorf(http.StatusForbidden, "%s", forbidden)
	}
	u, err := r.GNS3User(ctx, id)
	switch {
	case err == nil:
		if u.UserID == strings.ToLower(pathUserID) {
			return nil
		}
		return httpapi.Errorf(http.StatusForbidden, "%s", forbidden)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, gns3.ErrUnauthorized):
		// The controller does not know the caller: the UUID cannot be
		// theirs.
		return httpapi.Errorf(http.StatusForbidden, "%s", forbidden)
	default:
		httpapi.Logger(ctx).WarnContext(ctx, "could not resolve the caller's GNS3 user id", "err", err.Error())
		return httpapi.Errorf(http.StatusBadGateway, "Could not check user '%s' with the GNS3 controller (%s); use 'me' as the user id", truncate(pathUserID, 64), gns3.Describe(err))
	}
}

// Caller returns the identity of the request when its {user_id} path
// value names the caller (see Check): 401 without an identity, 403 with
// forbidden as the message for another user.
func (r *Resolver) Caller(req *http.Request, forbidden string) (auth.Identity, error) {
	id, ok := auth.FromContext(req.Context())
	if !ok || id.UserID == "" {
		return auth.Identity{}, httpapi.Errorf(http.StatusUnauthorized, "Not authenticated")
	}
	if err := r.Check(req.Context(), id, req.PathValue("user_id"), forbidden); err != nil {
		return auth.Identity{}, err
	}
	return id, nil
}

// keyOf keys the cache by the user and a hash of the token: the token
// itself is never kept.
func keyOf(id auth.Identity) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(id.UserID))
	h.Write([]byte{0})
	h.Write([]byte(id.Token))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (r *Resolver) cached(k [sha256.Size]byte) (gns3.User, bool) {
	if r.ttl <= 0 {
		return gns3.User{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.cache[k]
	if !ok {
		return gns3.User{}, false
	}
	if !r.now().Before(e.expires) {
		delete(r.cache, k)
		return gns3.User{}, false
	}
	return e.user, true
}

func (r *Resolver) remember(k [sha256.Size]byte, u gns3.User) {
	if r.ttl <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if len(r.cache) >= r.max {
		for key, e := range r.cache {
			if !now.Before(e.expires) {
				delete(r.cache, key)
			}
		}
		if len(r.cache) >= r.max {
			clear(r.cache)
		}
	}
	r.cache[k] = entry{user: u, expires: now.Add(r.ttl)}
}

// Len returns the number of cached users (tests).
func (r *Resolver) Len() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cache)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
