package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"agentchat/internal/store"
)

// MaxCredentialLen bounds the bearer credential accepted (larger ones are
// refused before any parsing).
const MaxCredentialLen = 8 << 10

// DefaultForwardTTL is the lifetime of the JWT minted for an API-key caller,
// forwarded to GNS3 in Identity.Token. It covers a whole turn.
const DefaultForwardTTL = 15 * time.Minute

// TouchInterval is how often, at most, an Authenticator records the last
// use of one API key (store.APIKeys.TouchAPIKey): the first successful use
// of a key, then the first one at least TouchInterval after the last
// recorded, so authentication never costs a store write per request.
const TouchInterval = time.Minute

const (
	// maxTouched bounds the keys whose last recorded use is remembered.
	maxTouched = 10_000
	// touchTimeout bounds one last-use update.
	touchTimeout = 5 * time.Second
)

// Authenticator turns an Authorization header into an Identity.
//
// With a JWT secret it accepts "Bearer <jwt>" (checked by JWTVerifier) and
// "Bearer ack_..." API keys (looked up by hash, revoked and expired keys
// refused). An API-key caller gets Identity.Token = a JWT for its user id,
// signed with the shared secret and valid DefaultForwardTTL, so the tools
// can act on GNS3 as that user (GNS3 does not know agentchat's API keys).
//
// Without a secret (local single-user mode) every request is the user
// LocalUserID, whatever the header says: credentials, API keys included,
// are not checked, and a bearer token that is not an API key is passed on
// in Identity.Token so that a local server can still reach a GNS3
// controller with the user's GNS3 token.
//
// Each successful API-key authentication records the key's last use in the
// background (at most once per key per TouchInterval, see WaitTouches): the
// request never waits for it, and a failure is only logged.
type Authenticator struct {
	jwt  *JWTVerifier
	keys store.APIKeys
	now  func() time.Time
	log  *slog.Logger

	touchMu  sync.Mutex
	touched  map[keyRef]time.Time // last recorded use, by key
	inflight int                  // last-use updates running
	idle     *sync.Cond           // on touchMu: inflight fell to 0
}

// keyRef names one API key.
type keyRef struct{ user, id string }

// Option tunes an Authenticator.
type Option func(*Authenticator)

// WithLogger sets the logger of failed last-use updates (nil or not given:
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(a *Authenticator) { a.log = l }
}

// NewAuthenticator builds an Authenticator. secret nil or empty selects
// single-user mode; otherwise it must be at least MinSecretLen bytes. keys
// may be nil (then every API key is refused). now is the clock; nil means
// time.Now.
func NewAuthenticator(secret []byte, keys store.APIKeys, now func() time.Time, opts ...Option) (*Authenticator, error) {
	if now == nil {
		now = time.Now
	}
	a := &Authenticator{keys: keys, now: now, touched: map[keyRef]time.Time{}}
	a.idle = sync.NewCond(&a.touchMu)
	for _, o := range opts {
		o(a)
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if len(secret) > 0 {
		v, err := NewJWTVerifier(secret, now)
		if err != nil {
			return nil, fmt.Errorf("new authenticator: %w", err)
		}
		a.jwt = v
	}
	return a, nil
}

// SingleUser reports local single-user mode.
func (a *Authenticator) SingleUser() bool { return a.jwt == nil }

// Verifier returns the JWT verifier, nil in single-user mode.
func (a *Authenticator) Verifier() *JWTVerifier { return a.jwt }

// Authenticate checks the Authorization header of a request. Errors:
// ErrNoCredentials when the header is empty; ErrInvalidCredentials (wrapped
// with a log-safe reason) for anything unacceptable. Any other error (the
// key store failing) is an internal error, not a 401.
func (a *Authenticator) Authenticate(ctx context.Context, authorizationHeader string) (Identity, error) {
	header := strings.TrimSpace(authorizationHeader)
	if a.SingleUser() {
		id := Identity{UserID: LocalUserID, Via: ViaLocal}
		tok, err := bearer(header)
		switch {
		case err != nil:
		case IsAPIKey(tok):
			// No credential is needed here, but a key that is presented
			// must be valid: a revoked or expired key never works.
			k, err := a.lookupKey(ctx, tok)
			if err != nil {
				return Identity{}, err
			}
			a.touch(ctx, k)
			// The key's limits hold here too.
			id.KeyID, id.KeyLimits = k.ID, k.Limits
		default:
			id.Token = tok
		}
		return id, nil
	}
	if header == "" {
		return Identity{}, ErrNoCredentials
	}
	tok, err := bearer(header)
	if err != nil {
		return Identity{}, err
	}
	if IsAPIKey(tok) {
		return a.apiKey(ctx, tok)
	}
	user, err := a.jwt.Verify(tok)
	if err != nil {
		return Identity{}, err
	}
	return Identity{UserID: user, Token: tok, Via: ViaJWT}, nil
}

// bearer extracts the credential of "Bearer <credential>" (scheme
// case-insensitive, one credential without spaces or commas).
func bearer(header string) (string, error) {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", fmt.Errorf("%w: authorization scheme is not Bearer", ErrInvalidCredentials)
	}
	cred = strings.TrimLeft(cred, " \t")
	switch {
	case cred == "":
		return "", fmt.Errorf("%w: empty bearer credential", ErrInvalidCredentials)
	case len(cred) > MaxCredentialLen:
		return "", fmt.Errorf("%w: bearer credential longer than %d bytes", ErrInvalidCredentials, MaxCredentialLen)
	case strings.ContainsAny(cred, " \t,"):
		return "", fmt.Errorf("%w: malformed bearer credential", ErrInvalidCredentials)
	}
	for i := 0; i < len(cred); i++ {
		if c := cred[i]; c < 0x21 || c > 0x7e {
			return "", fmt.Errorf("%w: malformed bearer credential", ErrInvalidCredentials)
		}
	}
	return cred, nil
}

// apiKey authenticates an "ack_" credential.
func (a *Authenticator) apiKey(ctx context.Context, secret string) (Identity, error) {
	k, err := a.lookupKey(ctx, secret)
	if err != nil {
		return Identity{}, err
	}
	tok, err := a.jwt.Issue(k.UserID, DefaultForwardTTL)
	if err != nil {
		return Identity{}, fmt.Errorf("api key %s: %w", k.ID, err)
	}
	a.touch(ctx, k)
	return Identity{UserID: k.UserID, Token: tok, Via: ViaAPIKey, KeyID: k.ID, KeyLimits: k.Limits}, nil
}

// touch records in the background that k was used now, unless this
// Authenticator recorded a use of k less than TouchInterval ago. The update
// outlives the request (context.WithoutCancel) for at most touchTimeout; a
// failure is logged, and the next attempt comes TouchInterval later.
func (a *Authenticator) touch(ctx context.Context, k *store.APIKey) {
	now := a.now()
	if !a.claimTouch(keyRef{user: k.UserID, id: k.ID}, now) {
		return
	}
	a.touchMu.Lock()
	a.inflight++
	a.touchMu.Unlock()
	go func() {
		defer func() {
			a.touchMu.Lock()
			a.inflight--
			if a.inflight == 0 {
				a.idle.Broadcast()
			}
			a.touchMu.Unlock()
		}()
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), touchTimeout)
		defer cancel()
		if err := a.keys.TouchAPIKey(tctx, k.UserID, k.ID, now); err != nil {
			a.log.WarnContext(tctx, "api key last use not recorded", "key_id", k.ID, "user_id", k.UserID, "error", err)
		}
	}()
}

// claimTouch reports whether a use of ref at now is to be recorded, and if
// so remembers now as its last recorded use. The memory is bounded: once
// it holds maxTouched keys, it forgets the uses older than TouchInterval,
// and everything if that is not enough to free a quarter of it (forgetting
// only costs an early update).
func (a *Authenticator) claimTouch(ref keyRef, now time.Time) bool {
	a.touchMu.Lock()
	defer a.touchMu.Unlock()
	last, ok := a.touched[ref]
	if d := now.Sub(last); ok && d >= 0 && d < TouchInterval {
		return false
	}
	if !ok && len(a.touched) >= maxTouched {
		for r, t := range a.touched {
			if d := now.Sub(t); d < 0 || d >= TouchInterval {
				delete(a.touched, r)
			}
		}
		if len(a.touched) > maxTouched*3/4 {
			clear(a.touched)
		}
	}
	a.touched[ref] = now
	return true
}

// WaitTouches blocks until no last-use update is running: every update
// started by an Authenticate call that returned before WaitTouches was
// called has then finished. For tests, and for a graceful shutdown once
// requests have stopped.
func (a *Authenticator) WaitTouches() {
	a.touchMu.Lock()
	defer a.touchMu.Unlock()
	for a.inflight > 0 {
		a.idle.Wait()
	}
}

// lookupKey returns the active key whose secret is secret.
func (a *Authenticator) lookupKey(ctx context.Context, secret string) (*store.APIKey, error) {
	if !wellFormedAPIKey(secret) {
		return nil, fmt.Errorf("%w: malformed api key", ErrInvalidCredentials)
	}
	if a.keys == nil {
		return nil, fmt.Errorf("%w: api keys are not enabled", ErrInvalidCredentials)
	}
	hash := HashAPIKey(secret)
	k, err := a.keys.APIKeyByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: unknown api key", ErrInvalidCredentials)
	}
	if err != nil {
		return nil, fmt.Errorf("look up api key: %w", err)
	}
	now := a.now()
	switch {
	case k.Hash != hash || k.UserID == "":
		return nil, fmt.Errorf("%w: unknown api key", ErrInvalidCredentials)
	case !k.RevokedAt.IsZero():
		return nil, fmt.Errorf("%w: api key %s revoked", ErrInvalidCredentials, k.ID)
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return nil, fmt.Errorf("%w: api key %s expired", ErrInvalidCredentials, k.ID)
	}
	return k, nil
}
