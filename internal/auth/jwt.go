package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinSecretLen is the shortest HS256 secret accepted.
const MinSecretLen = 32

// Leeway is the clock skew tolerated on exp (and nbf) with the GNS3
// controller that issues the tokens.
const Leeway = 10 * time.Second

// JWTVerifier checks HS256 tokens: the algorithm is pinned (none, HS384,
// HS512, RS256... are refused), exp is required and enforced with Leeway,
// and sub, the user id, must be a non-empty string. Tokens issued by a GNS3
// controller sharing the secret ({"sub": <user>, "exp": ...}) work as-is.
type JWTVerifier struct {
	secret []byte
	now    func() time.Time
	parser *jwt.Parser
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
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(now),
	)
	return v, nil
}

// Verify checks token and returns its subject. Every failure wraps
// ErrInvalidCredentials with the reason (the token itself is never part of
// the error).
func (v *JWTVerifier) Verify(token string) (userID string, err error) {
	var claims jwt.RegisteredClaims
	_, err = v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		// Belt and braces: WithValidMethods already pinned the algorithm.
		if m, ok := t.Method.(*jwt.SigningMethodHMAC); !ok || m != jwt.SigningMethodHS256 {
			return nil, fmt.Errorf("unexpected signing method %v", t.Header["alg"])
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
	return claims.Subject, nil
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
