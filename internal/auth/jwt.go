package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinSecretLen is the shortest HS256 secret accepted.
const MinSecretLen = 32

// Leeway is the clock skew tolerated on exp, nbf and iat with the GNS3
// controller that issues the tokens. It stays at most 30 seconds: a token
// is never honoured more than that past its exp.
const Leeway = 10 * time.Second

// JWTVerifier checks HS256 tokens (see the package documentation for the
// rules): the algorithm is pinned (none, HS384, HS512, RS256... are
// refused), a crit header is refused (no extension is understood), exp is
// required, exp, nbf and iat are JSON numbers checked against the clock
// with Leeway, and sub, the user id, must be a non-empty string. Tokens
// issued by a GNS3 controller sharing the secret ({"sub": <user>, "exp":
// ...}) work as-is.
type JWTVerifier struct {
	secret []byte
	now    func() time.Time
	parser *jwt.Parser
	// verified remembers the tokens that passed, so that a client sending
	// the same token with every request is checked in full once.
	verified verifiedTokens
}

// NewJWTVerifier returns a verifier for secret (at least MinSecretLen
// bytes). now is the clock; nil means time.Now.
func NewJWTVerifier(secret []byte, now func() time.Time) (*JWTVerifier, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("jwt secret must be at least %d bytes, got %d", MinSecretLen, len(secret))
	}
	if now == nil {
		now = time.Now
	}
	v := &JWTVerifier{secret: append([]byte(nil), secret...), now: now}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(now),
	)
	return v, nil
}

// Verify checks token and returns its subject. Every failure wraps
// ErrInvalidCredentials with the reason (the token itself is never part of
// the error).
//
// A token that passed is remembered (by its SHA-256, never as text) until
// its exp: the same token is then only checked against the clock, which
// skips the decoding and the HMAC (most of a request's authentication cost
// for a client that sends one token with every request).
func (v *JWTVerifier) Verify(token string) (userID string, err error) {
	sum := sha256.Sum256([]byte(token))
	now := v.now()
	if sub, ok := v.verified.get(sum, now); ok {
		return sub, nil
	}
	var claims tokenClaims
	_, err = v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		// Belt and braces: WithValidMethods already pinned the algorithm.
		if m, ok := t.Method.(*jwt.SigningMethodHMAC); !ok || m != jwt.SigningMethodHS256 {
			return nil, fmt.Errorf("unexpected signing method %v", t.Header["alg"])
		}
		// golang-jwt ignores crit (RFC 7515 §4.1.11): check it here,
		// before the secret is used.
		if err := checkCrit(t.Header); err != nil {
			return nil, err
		}
		return v.secret, nil
	})
	if err != nil {
		// jwt error texts name the failed check, never the token content.
		return "", fmt.Errorf("%w: jwt: %v", ErrInvalidCredentials, err)
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: jwt: missing sub claim", ErrInvalidCredentials)
	}
	if claims.hasType && claims.typ != AccessTokenType {
		// A refresh token (or any other kind) never authenticates a
		// request, even with a valid signature.
		return "", fmt.Errorf("%w (%w): jwt: type claim is not %q", ErrNotAccessToken, ErrInvalidCredentials, AccessTokenType)
	}
	// exp is required: the parser refused a token without it.
	v.verified.put(sum, claims.Subject, claims.ExpiresAt.Time.Add(Leeway), now)
	return claims.Subject, nil
}

// checkCrit applies RFC 7515 §4.1.11 to a decoded JOSE header: crit, when
// present, is a non-empty array of names of extension parameters that the
// header carries, each of which the recipient must understand, or the
// token is invalid. This verifier understands no extension: JWS extensions
// such as "b64" (RFC 7797) change how the signature is computed, and a
// verifier that does not implement one must refuse the token. A malformed
// crit is refused too.
func checkCrit(header map[string]any) error {
	raw, ok := header["crit"]
	if !ok {
		return nil
	}
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		return errors.New("crit header must be a non-empty array")
	}
	for _, x := range list {
		name, ok := x.(string)
		if !ok || name == "" {
			return errors.New("crit header must list parameter names")
		}
		if _, present := header[name]; !present {
			// The name comes from the token: keep it out of the error.
			return errors.New("crit header names a parameter the header lacks")
		}
	}
	return errors.New("crit header names a parameter that is not understood")
}

// AccessTokenType is the only value of a token's "type" claim accepted.
// Tokens without the claim (GNS3 3.0 issues {"sub", "exp", "ver"}) are
// accepted; a controller that also issues refresh tokens marks them with
// another type, and those are refused.
const AccessTokenType = "access"

// tokenClaims are the claims of a token, decoded strictly: each claim is
// read under its exact name (encoding/json would also fill a field from
// "EXP" or "Sub"), and exp, nbf and iat must be JSON numbers
// (jwt.NumericDate also takes a numeric string such as "1700000000").
// The checks of the claims' values are golang-jwt's, through the
// embedded RegisteredClaims.
type tokenClaims struct {
	jwt.RegisteredClaims
	// typ is the "type" claim when hasType; a type that is not a JSON
	// string is kept as "" with hasType, so it is refused.
	typ     string
	hasType bool
}

// UnmarshalJSON decodes the claims set.
func (c *tokenClaims) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var rc jwt.RegisteredClaims
	for name, dst := range map[string]**jwt.NumericDate{"exp": &rc.ExpiresAt, "nbf": &rc.NotBefore, "iat": &rc.IssuedAt} {
		v, ok := raw[name]
		if !ok {
			continue
		}
		if v = bytes.TrimSpace(v); len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			return fmt.Errorf("%s claim must be a JSON number", name)
		}
		*dst = new(jwt.NumericDate)
		if err := json.Unmarshal(v, *dst); err != nil {
			return fmt.Errorf("%s claim: %w", name, err)
		}
	}
	for name, dst := range map[string]*string{"sub": &rc.Subject, "iss": &rc.Issuer, "jti": &rc.ID} {
		if v, ok := raw[name]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("%s claim must be a string", name)
			}
		}
	}
	if v, ok := raw["aud"]; ok {
		if err := json.Unmarshal(v, &rc.Audience); err != nil {
			return fmt.Errorf("aud claim: %w", err)
		}
	}
	c.RegisteredClaims = rc
	if v, ok := raw["type"]; ok {
		c.hasType = true
		// Not a string (null, a number...): typ stays "", refused.
		_ = json.Unmarshal(v, &c.typ)
	}
	return nil
}

// Issue signs an HS256 token for userID, valid for ttl, with the same
// secret: for tests, tooling, and the GNS3 token of API-key callers.
func (v *JWTVerifier) Issue(userID string, ttl time.Duration) (string, error) {
	if userID == "" {
		return "", errors.New("issue jwt: empty user id")
	}
	if ttl <= 0 {
		return "", fmt.Errorf("issue jwt: ttl must be positive, got %v", ttl)
	}
	now := v.now()
	claims := jwt.RegisteredClaims{
		Subject:   userID,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(v.secret)
	if err != nil {
		return "", fmt.Errorf("issue jwt: %w", err)
	}
	return s, nil
}
