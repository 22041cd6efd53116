package auth

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"
)

// TestVerifyTokenRules covers RFC 7515 §4.1.11 (crit) and the RFC 7519
// NumericDate claims: exp, nbf and iat are JSON numbers, checked against
// the clock with Leeway.
func TestVerifyTokenRules(t *testing.T) {
	if Leeway <= 0 || Leeway > 30*time.Second {
		t.Fatalf("Leeway = %v, want in (0, 30s]", Leeway)
	}
	v, err := NewJWTVerifier(secret, clock)
	if err != nil {
		t.Fatal(err)
	}
	exp := t0.Add(time.Hour).Unix()
	in := func(d time.Duration) int64 { return t0.Add(d).Unix() }
	withCrit := func(crit any, extra map[string]any) map[string]any {
		h := map[string]any{"alg": "HS256", "typ": "JWT", "crit": crit}
		for k, x := range extra {
			h[k] = x
		}
		return h
	}
	tests := []struct {
		name   string
		header map[string]any
		claims map[string]any
		ok     bool
	}{
		{"plain", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp}, true},
		{"fractional exp", hs256("HS256"), map[string]any{"sub": "bob", "exp": float64(exp) + 0.5}, true},
		{"exp as numeric string", hs256("HS256"), map[string]any{"sub": "bob", "exp": "9999999999"}, false},
		{"exp as word", hs256("HS256"), map[string]any{"sub": "bob", "exp": "tomorrow"}, false},
		{"exp null", hs256("HS256"), map[string]any{"sub": "bob", "exp": nil}, false},
		{"exp as bool", hs256("HS256"), map[string]any{"sub": "bob", "exp": true}, false},
		{"exp only under another case", hs256("HS256"), map[string]any{"sub": "bob", "EXP": exp}, false},
		{"string EXP beside a number exp", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "Exp": "1"}, true},
		{"nbf as numeric string", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "nbf": "0"}, false},
		{"iat as numeric string", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "iat": "0"}, false},
		{"nbf past", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "nbf": in(-time.Hour)}, true},
		{"nbf within leeway", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "nbf": in(Leeway - time.Second)}, true},
		{"nbf future", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "nbf": in(Leeway + time.Second)}, false},
		{"iat past", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "iat": in(-time.Minute)}, true},
		{"iat within leeway", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "iat": in(Leeway - time.Second)}, true},
		{"iat future", hs256("HS256"), map[string]any{"sub": "bob", "exp": exp, "iat": in(Leeway + time.Second)}, false},
		{"exp within leeway", hs256("HS256"), map[string]any{"sub": "bob", "exp": in(-Leeway + time.Second)}, true},
		{"exp past leeway", hs256("HS256"), map[string]any{"sub": "bob", "exp": in(-Leeway - time.Second)}, false},
		{"crit unknown extension", withCrit([]string{"x-ext"}, map[string]any{"x-ext": 1}), map[string]any{"sub": "bob", "exp": exp}, false},
		{"crit b64", withCrit([]string{"b64"}, map[string]any{"b64": false}), map[string]any{"sub": "bob", "exp": exp}, false},
		{"crit names an absent parameter", withCrit([]string{"x-ext"}, nil), map[string]any{"sub": "bob", "exp": exp}, false},
		{"crit names a registered parameter", withCrit([]string{"alg"}, nil), map[string]any{"sub": "bob", "exp": exp}, false},
		{"crit empty", withCrit([]string{}, nil), map[string]any{"sub": "bob", "exp": exp}, false},
		{"crit not a list", withCrit("x-ext", map[string]any{"x-ext": 1}), map[string]any{"sub": "bob", "exp": exp}, false},
		{"crit null", withCrit(nil, nil), map[string]any{"sub": "bob", "exp": exp}, false},
		{"unknown header parameter, not critical", map[string]any{"alg": "HS256", "x-ext": 1, "kid": "k1"}, map[string]any{"sub": "bob", "exp": exp}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user, err := v.Verify(rawToken(t, tt.header, tt.claims, secret, sha256.New))
			if tt.ok {
				if err != nil || user != "bob" {
					t.Fatalf("Verify = %q, %v; want bob", user, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify accepted the token as %q", user)
			}
			if !errors.Is(err, ErrInvalidCredentials) {
				t.Fatalf("err = %v, want ErrInvalidCredentials", err)
			}
		})
	}
}
