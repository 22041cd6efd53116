package llmconfig

import (
	"testing"

	"agentchat/internal/store"
)

func TestKeyAAD(t *testing.T) {
	if got := KeyAAD(store.UserOwner("alice"), "c1"); got != "llmcfg:U#alice:c1" {
		t.Error(got)
	}
	if got := KeyAAD(store.GroupOwner("g1"), "c1"); got != "llmcfg:G#g1:c1" {
		t.Error(got)
	}
}

// TestKeyMoves: a key moves with another provider or another endpoint,
// not with a base URL written differently.
func TestKeyMoves(t *testing.T) {
	cfg := func(provider, baseURL string) map[string]any {
		return map[string]any{"provider": provider, "base_url": baseURL, "model": "m"}
	}
	cur := cfg("openai", "https://api.example.com/v1")
	for _, tc := range []struct {
		name  string
		next  map[string]any
		moves bool
	}{
		{"unchanged", cfg("openai", "https://api.example.com/v1"), false},
		{"provider case and spaces", cfg(" OpenAI ", "https://api.example.com/v1"), false},
		{"scheme and host case, default port, trailing slash", cfg("openai", "HTTPS://API.example.com:443/v1/"), false},
		{"another provider", cfg("groq", "https://api.example.com/v1"), true},
		{"another host", cfg("openai", "https://evil.example.net/v1"), true},
		{"another port", cfg("openai", "https://api.example.com:8443/v1"), true},
		{"another path", cfg("openai", "https://api.example.com/v2"), true},
		{"another scheme", cfg("openai", "http://api.example.com/v1"), true},
		{"base URL removed", map[string]any{"provider": "openai"}, true},
		{"unparsable", cfg("openai", "://bad"), true},
	} {
		if got := KeyMoves(cur, tc.next); got != tc.moves {
			t.Errorf("%s: KeyMoves = %v, want %v", tc.name, got, tc.moves)
		}
	}
	if KeyMoves(cfg("openai", "::bad"), cfg("openai", "::bad")) {
		t.Error("an unparsable URL does not equal itself")
	}
}
