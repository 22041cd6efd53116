package auth

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"agentchat/internal/manualclock"
)

// A token that passed is remembered, and a remembered token is still
// refused once it expires; tokens that failed a check are not remembered,
// and a token that differs from a remembered one by a byte is checked in
// full.
func TestVerifiedTokens(t *testing.T) {
	type step struct {
		after   time.Duration // clock since t0 at this step
		token   string        // "valid", "tampered", "early" (nbf in the future)
		wantOK  bool
		wantLen int // tokens remembered after the step
	}
	exp := t0.Add(time.Hour)
	cases := []struct {
		name  string
		steps []step
	}{
		{"the same token twice", []step{
			{0, "valid", true, 1},
			{time.Minute, "valid", true, 1},
		}},
		{"a remembered token expires", []step{
			{0, "valid", true, 1},
			{time.Hour + Leeway - time.Second, "valid", true, 1},
			{time.Hour + Leeway, "valid", false, 0},
		}},
		{"a tampered token is checked in full", []step{
			{0, "valid", true, 1},
			{0, "tampered", false, 1},
		}},
		{"a token refused for its nbf is not remembered", []step{
			{0, "early", false, 0},
			{10 * time.Minute, "early", true, 1},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := manualclock.New(t0)
			v, err := NewJWTVerifier(secret, clk.Now)
			if err != nil {
				t.Fatal(err)
			}
			valid := rawToken(t, hs256("HS256"), claims("bob", exp), secret, sha256.New)
			tokens := map[string]string{
				"valid":    valid,
				"tampered": valid[:len(valid)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(valid, "AA")],
				"early":    rawToken(t, hs256("HS256"), map[string]any{"sub": "bob", "exp": exp.Unix(), "nbf": t0.Add(5 * time.Minute).Unix()}, secret, sha256.New),
			}
			for i, s := range tc.steps {
				clk.Set(t0.Add(s.after))
				sub, err := v.Verify(tokens[s.token])
				switch {
				case s.wantOK && (err != nil || sub != "bob"):
					t.Errorf("step %d (%s at %v): %q, %v; want bob", i, s.token, s.after, sub, err)
				case !s.wantOK && !errors.Is(err, ErrInvalidCredentials):
					t.Errorf("step %d (%s at %v): %q, %v; want ErrInvalidCredentials", i, s.token, s.after, sub, err)
				}
				if n := v.verified.len(); n != s.wantLen {
					t.Errorf("step %d: %d tokens remembered, want %d", i, n, s.wantLen)
				}
			}
		})
	}
}

// The remembered tokens stay bounded.
func TestVerifiedTokensBound(t *testing.T) {
	var v verifiedTokens
	until := t0.Add(time.Hour)
	for i := range maxVerifiedTokens + 10 {
		v.put(sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}), "bob", until, t0)
	}
	if n := v.len(); n > maxVerifiedTokens {
		t.Fatalf("%d tokens remembered, bound %d", n, maxVerifiedTokens)
	}
}
