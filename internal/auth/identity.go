// Package auth authenticates requests: HS256 JWTs shared with the GNS3
// controller, long-lived API keys stored only as hashes, and the local
// single-user mode. The resulting Identity, which carries the raw bearer
// credential for forwarding to GNS3, travels in the request context only.
//
// # Tokens
//
// A JWT is accepted only when all of these hold (JWTVerifier; the checks
// are golang-jwt's where it has them):
//
//   - alg is HS256 and the signature verifies with the shared secret;
//   - the header has no crit parameter (RFC 7515 §4.1.11): no JWS
//     extension is understood, so a token that makes one critical, or
//     whose crit is malformed, is refused;
//   - exp is present; exp, nbf and iat, when present, are JSON numbers
//     (a string such as "1700000000" is refused), read under their exact
//     names;
//   - the token is not expired (now < exp + Leeway), not used before nbf
//     (now >= nbf - Leeway) and not issued in the future (now >= iat -
//     Leeway);
//   - sub, the user id, is a non-empty string;
//   - type, when present, is "access" (AccessTokenType): a refresh token
//     or any other kind is refused with ErrNotAccessToken. GNS3 3.0
//     tokens have no type and are accepted.
//
// The ver claim of GNS3 tokens (the user's token version, which a GNS3
// logout bumps) is not checked here: only the controller knows the
// current version. It is honoured wherever the token is forwarded to
// GNS3 (the project check, the tools, the GNS3 user lookup), which
// answers 401 for a stale version.
//
// Leeway, the clock skew tolerated with the token issuer, is 10 seconds
// and is kept at most 30 seconds.
package auth

import (
	"context"
	"log/slog"
	"strconv"

	"agentchat/internal/store"
)

// Ways an identity was established (Identity.Via).
const (
	ViaJWT    = "jwt"
	ViaAPIKey = "api_key"
	ViaLocal  = "local"
)

// LocalUserID is the user of local single-user mode.
const LocalUserID = "local"

// Identity is the authenticated caller of one request.
type Identity struct {
	// UserID is the JWT's sub, the API key's owner, or LocalUserID.
	UserID string
	// Token is the bearer credential to forward to the GNS3 controller as
	// "Authorization: Bearer <Token>": the caller's JWT, a short-lived JWT
	// minted for an API-key caller, or in single-user mode whatever bearer
	// token the client sent (empty if none). Never log, store or prompt it;
	// String, GoString, LogValue and JSON leave it out.
	Token string `json:"-"`
	// Via is ViaJWT, ViaAPIKey or ViaLocal.
	Via string
	// KeyID is the id of the API key the caller presented (Via
	// ViaAPIKey, or ViaLocal when a key was presented in single-user
	// mode); empty otherwise. It is not a secret.
	KeyID string
	// KeyLimits are that key's own limits (max_parallel, rpm, tpm) as
	// read with the key; zero without a key or without limits.
	KeyLimits store.KeyLimits
}

// String describes the identity without its token.
func (id Identity) String() string { return "user=" + id.UserID + " via=" + id.Via }

// GoString keeps %#v from printing the token.
func (id Identity) GoString() string {
	return "auth.Identity{UserID:" + strconv.Quote(id.UserID) + ", Via:" + strconv.Quote(id.Via) + "}"
}

// LogValue implements slog.LogValuer without the token.
func (id Identity) LogValue() slog.Value {
	if id.KeyID != "" {
		return slog.GroupValue(slog.String("user_id", id.UserID), slog.String("via", id.Via), slog.String("key_id", id.KeyID))
	}
	return slog.GroupValue(slog.String("user_id", id.UserID), slog.String("via", id.Via))
}

type identityKey struct{}

// WithIdentity returns a context carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity stored by WithIdentity.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}
