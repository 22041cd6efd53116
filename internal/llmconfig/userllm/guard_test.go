package userllm

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

func hi() llm.Request {
	return llm.Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}}
}

// TestConfigurationsAreGuarded: a user's base URL at a loopback, private
// or metadata address is refused (before any call when the URL writes the
// address, at connect time when a name resolves to it) unless the guard
// allows it; single-user mode allows the laptop's own models.
func TestConfigurationsAreGuarded(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply{Text: "hello"})
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "intranet.test" {
			return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	tests := []struct {
		name    string
		guard   llm.Guard
		cfg     map[string]any
		early   string // in the ConfigError of Resolve
		dial    bool   // refused when connecting
		answers bool
	}{
		{name: "multi-user default refuses loopback", cfg: map[string]any{"provider": "openai", "base_url": srv.BaseURL(), "model": "m"},
			early: "points to a loopback address (127.0.0.1)"},
		{name: "the ollama default URL is loopback", cfg: map[string]any{"provider": "ollama", "model": "m"},
			early: "LLM_ALLOW_PRIVATE_HOSTS"},
		{name: "metadata", cfg: map[string]any{"provider": "openai", "base_url": "http://169.254.169.254/latest", "model": "m"},
			guard: llm.Guard{Local: true}, early: "link-local or cloud metadata address"},
		{name: "obfuscated", cfg: map[string]any{"provider": "openai", "base_url": "http://0x7f000001:" + port + "/v1", "model": "m"},
			early: "loopback address (127.0.0.1)"},
		{name: "a name of a private address", cfg: map[string]any{"provider": "openai", "base_url": "http://intranet.test:" + port + "/v1", "model": "m"},
			guard: llm.Guard{Lookup: lookup}, dial: true},
		{name: "allowed", cfg: map[string]any{"provider": "openai", "base_url": srv.BaseURL(), "model": "m"},
			guard: testGuard, answers: true},
		{name: "single-user mode", cfg: map[string]any{"provider": "openai", "base_url": srv.BaseURL(), "model": "m"},
			guard: llm.Guard{Local: true}, answers: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.r = New(Options{Store: f.st, Secrets: f.box, Guard: tt.guard})
			f.add(t, "text", tt.cfg, aliceKey)
			n := len(srv.Requests())
			res, err := f.r.Resolve(aliceCtx(), "alice")
			if tt.early != "" {
				var ce *llm.ConfigError
				if !errors.As(err, &ce) || !strings.Contains(ce.Message, tt.early) || !strings.Contains(ce.Message, "LLM_ALLOW_PRIVATE_HOSTS") {
					t.Fatalf("resolve: %v, want a ConfigError with %q", err, tt.early)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := res.Client.Stream(aliceCtx(), hi(), nil)
			switch {
			case tt.dial && (!errors.Is(err, llm.ErrBlockedAddress) || !strings.Contains(llm.UserMessage(err), "intranet.test resolves to a private network address")):
				t.Fatalf("stream: %v (%q), want the address refused", err, llm.UserMessage(err))
			case tt.answers && (err != nil || out.Content != "hello"):
				t.Fatalf("stream: %q, %v", out.Content, err)
			}
			if !tt.answers && len(srv.Requests()) != n {
				t.Fatal("the scripted server was called")
			}
		})
	}
}

// TestConfigurationsHaveTheAnswerCap: a user's client cuts an answer at
// Options.MaxAnswerBytes (LLM_MAX_ANSWER_BYTES).
func TestConfigurationsHaveTheAnswerCap(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply{Text: strings.Repeat("word ", 1000)})
	f := newFixture(t)
	f.r = New(Options{Store: f.st, Secrets: f.box, Guard: testGuard, MaxAnswerBytes: 1024})
	f.add(t, "text", map[string]any{"provider": "openai", "base_url": srv.BaseURL(), "model": "m"}, aliceKey)
	res, err := f.r.Resolve(aliceCtx(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	out, err := res.Client.Stream(aliceCtx(), hi(), nil)
	if !errors.Is(err, llm.ErrAnswerTooLarge) || len(out.Content) != 1024 || !strings.Contains(llm.UserMessage(err), "1 KiB") {
		t.Fatalf("answer of %d bytes, error %v", len(out.Content), err)
	}
}
