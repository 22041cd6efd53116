package auth

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestVerifyTokenType: a token whose type claim is present and is not
// "access" (a GNS3 refresh token, say) is refused with ErrNotAccessToken,
// which is also an ErrInvalidCredentials; a token without type, as GNS3
// 3.0 issues them ({"sub", "exp", "ver"}), keeps working.
func TestVerifyTokenType(t *testing.T) {
	v, err := NewJWTVerifier(secret, clock)
	if err != nil {
		t.Fatal(err)
	}
	exp := t0.Add(time.Hour).Unix()
	tests := []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"no type", map[string]any{"sub": "bob", "exp": exp}, true},
		{"gns3 3.0 claims with ver", map[string]any{"sub": "bob", "exp": exp, "ver": 3}, true},
		{"access", map[string]any{"sub": "bob", "exp": exp, "type": "access"}, true},
		{"refresh", map[string]any{"sub": "bob", "exp": exp, "type": "refresh"}, false},
		{"Access in another case", map[string]any{"sub": "bob", "exp": exp, "type": "Access"}, false},
		{"empty", map[string]any{"sub": "bob", "exp": exp, "type": ""}, false},
		{"null", map[string]any{"sub": "bob", "exp": exp, "type": nil}, false},
		{"number", map[string]any{"sub": "bob", "exp": exp, "type": 1}, false},
		{"list", map[string]any{"sub": "bob", "exp": exp, "type": []string{"access"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := rawToken(t, hs256("HS256"), tt.claims, secret, sha256.New)
			// Twice: the second time the token is checked against the
			// cache of verified tokens, which must not hold a refused one.
			for range 2 {
				user, err := v.Verify(tok)
				if tt.ok {
					if err != nil || user != "bob" {
						t.Fatalf("Verify = %q, %v; want bob", user, err)
					}
					continue
				}
				if err == nil {
					t.Fatalf("Verify accepted the token as %q", user)
				}
				if !errors.Is(err, ErrNotAccessToken) || !errors.Is(err, ErrInvalidCredentials) {
					t.Fatalf("err = %v, want ErrNotAccessToken and ErrInvalidCredentials", err)
				}
				var ce CredentialError
				if !errors.As(err, &ce) || ce != ErrNotAccessToken {
					t.Fatalf("first credential error of %v is %q, want ErrNotAccessToken", err, ce)
				}
			}
		})
	}
	if !strings.Contains(ErrNotAccessToken.Error(), "access") {
		t.Fatalf("message %q does not say an access token is needed", ErrNotAccessToken)
	}
}
