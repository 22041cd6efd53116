package contextwin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// origEnv is the environment before TestMain changed it, for the go command.
var origEnv []string

// networkUses counts attempts to reach the network during the tests.
var networkUses atomic.Int64

type noNetwork struct{}

func (noNetwork) RoundTrip(r *http.Request) (*http.Response, error) {
	networkUses.Add(1)
	return nil, fmt.Errorf("test runs offline: request to %s refused", r.URL)
}

// TestMain runs every test offline: HTTP goes to a transport that refuses and
// counts, the resolver cannot dial, proxies point at a closed port and cache
// directories at an empty folder. The vocabularies are first loaded under
// these conditions, so the tests prove they are embedded.
func TestMain(m *testing.M) {
	origEnv = os.Environ()
	http.DefaultTransport = noNetwork{}
	http.DefaultClient = &http.Client{Transport: noNetwork{}}
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(_ context.Context, _, _ string) (net.Conn, error) {
		networkUses.Add(1)
		return nil, errors.New("test runs offline: DNS refused")
	}}
	dir, err := os.MkdirTemp("", "contextwin-offline-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		os.Setenv(k, "http://127.0.0.1:1")
	}
	for _, k := range []string{"HOME", "XDG_CACHE_HOME", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"} {
		os.Setenv(k, dir)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if n := networkUses.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d attempts to reach the network\n", n)
		code = 1
	}
	os.Exit(code)
}

func TestRatio(t *testing.T) {
	tests := []struct {
		strategy string
		want     float64
		ok       bool
	}{
		{"conservative", 0.60, true},
		{"balanced", 0.75, true},
		{"aggressive", 0.85, true},
		{" Aggressive ", 0.85, true},
		{"BALANCED", 0.75, true},
		{"", 0, false},
		{"greedy", 0, false},
	}
	for _, tt := range tests {
		got, ok := Ratio(tt.strategy)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Ratio(%q) = %v, %v; want %v, %v", tt.strategy, got, ok, tt.want, tt.ok)
		}
	}
	if r, ok := Ratio(DefaultStrategy); !ok || r != 0.75 {
		t.Errorf("Ratio(DefaultStrategy) = %v, %v", r, ok)
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		k         int
		strategy  string
		maxTokens int
		want      int
	}{
		{128, Conservative, 0, 76800},
		{128, Balanced, 0, 96000},
		{128, Aggressive, 0, 108800}, // exact: 0.85 in float64 would give 108799.99…
		{8, Aggressive, 0, 6800},
		{200, Aggressive, 0, 170000},
		{1000, Balanced, 0, 750000},
		{128, Balanced, 4096, 91904},
		{128, Conservative, 16384, 60416},
		{8, Conservative, 4800, 0},     // reservation takes exactly the window
		{8, Conservative, 10000, 0},    // and more than the window: never negative
		{128, "unknown", 0, 96000},     // unknown strategy: DefaultStrategy
		{128, "", 1000, 95000},         // empty strategy: DefaultStrategy
		{128, "Aggressive", 0, 108800}, // case-insensitive
		{128, Balanced, -5, 96000},     // negative max_tokens reserves nothing
		{0, Balanced, 0, 0},
		{-4, Balanced, 0, 0},
	}
	for _, tt := range tests {
		if got := Budget(tt.k, tt.strategy, tt.maxTokens); got != tt.want {
			t.Errorf("Budget(%d, %q, %d) = %d, want %d", tt.k, tt.strategy, tt.maxTokens, got, tt.want)
		}
	}
}

func TestEffectiveStrategy(t *testing.T) {
	for in, want := range map[string]string{"": Balanced, "x": Balanced, " CONSERVATIVE": Conservative, "aggressive": Aggressive} {
		if got := EffectiveStrategy(in); got != want {
			t.Errorf("EffectiveStrategy(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTooLargeErrorMessage(t *testing.T) {
	tests := []struct {
		err  *TooLargeError
		want []string
	}{
		{&TooLargeError{Need: 131072, Budget: 96000, ContextLimitK: 128, Strategy: Balanced},
			[]string{"need about 131,072 tokens", "more than the 96,000 available", "(context_limit 128 k, strategy balanced)", "Shorten the message or raise context_limit."}},
		{&TooLargeError{Need: 9000, Budget: 2704, ContextLimitK: 8, Strategy: Conservative, MaxTokens: 2096},
			[]string{"need about 9,000 tokens", "more than the 2,704 available", "context_limit 8 k, strategy conservative, 2,096 tokens reserved for the answer by max_tokens"}},
		{&TooLargeError{Need: 812, Budget: 750},
			[]string{"need about 812 tokens, more than the 750 available in this model's context window. Shorten"}},
		{&TooLargeError{Need: 40, Budget: 0, ContextLimitK: 4, Strategy: Balanced, MaxTokens: 4000},
			[]string{"No room is left", "4,000 tokens reserved for the answer by max_tokens", "need about 40 tokens", "Lower max_tokens or raise context_limit."}},
	}
	for _, tt := range tests {
		msg := tt.err.Error()
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%#v.Error() = %q, want it to contain %q", tt.err, msg, w)
			}
		}
		var err error = tt.err
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("errors.Is(%v, ErrTooLarge) = false", err)
		}
		var tl *TooLargeError
		if !errors.As(fmt.Errorf("turn: %w", err), &tl) || tl.Need != tt.err.Need {
			t.Errorf("errors.As through wrapping failed for %v", err)
		}
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 96000: "96,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}
