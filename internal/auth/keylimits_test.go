package auth

import (
	"context"
	"testing"

	"agentchat/internal/store"
)

// TestIdentityCarriesKeyLimits: an API-key identity names its key and
// carries the key's own limits (in both modes), so that the key's
// max_parallel, rpm and tpm can be enforced; a JWT identity has none.
func TestIdentityCarriesKeyLimits(t *testing.T) {
	lim := store.KeyLimits{MaxParallel: 30, RPM: 5, TPM: 1000}
	keys := &memKeys{}
	sec, prefix, hash, err := GenerateAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.CreateAPIKey(context.Background(), &store.APIKey{ID: "k-lim", UserID: "carol", Hash: hash, Prefix: prefix, Limits: lim}); err != nil {
		t.Fatal(err)
	}
	multi, err := NewAuthenticator(secret, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	single, err := NewAuthenticator(nil, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := multi.Verifier().Issue("carol", DefaultForwardTTL)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		a       *Authenticator
		header  string
		wantKey string
		want    store.KeyLimits
	}{
		{"api key", multi, "Bearer " + sec, "k-lim", lim},
		{"api key, single-user mode", single, "Bearer " + sec, "k-lim", lim},
		{"jwt", multi, "Bearer " + jwt, "", store.KeyLimits{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := tt.a.Authenticate(context.Background(), tt.header)
			if err != nil {
				t.Fatal(err)
			}
			if id.KeyID != tt.wantKey || id.KeyLimits != tt.want {
				t.Errorf("key %q limits %+v, want %q %+v", id.KeyID, id.KeyLimits, tt.wantKey, tt.want)
			}
		})
	}
	multi.WaitTouches()
	single.WaitTouches()
}
