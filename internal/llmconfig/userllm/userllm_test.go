package userllm

import (
	"context"
	"crypto/rand"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/config"
	"agentchat/internal/llm"
	"agentchat/internal/llmconfig"
	"agentchat/internal/secrets"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

const aliceKey = "sk-alice-SECRET-4f9a2c7e1b"

// testGuard lets the configurations reach the scripted servers on
// 127.0.0.1, as LLM_ALLOW_PRIVATE_HOSTS=127.0.0.1/32 would.
var testGuard = llm.Guard{Allow: config.HostAllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}

type fixture struct {
	st  *sqlite.Store
	box *secrets.Box
	r   *Resolver
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agentchat.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	key := make([]byte, secrets.KeyLen)
	_, _ = rand.Read(key)
	box, err := secrets.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	fallback, err := llm.NewClient(llm.Config{APIKey: "sk-server", BaseURL: "http://127.0.0.1:1/v1", Model: "server-model"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, box: box, r: New(Options{Store: st, Secrets: box, Fallback: llm.NewStaticResolver(fallback), Guard: testGuard})}
}

// add stores a default configuration of alice with the given config
// object, sealing key when not empty.
func (f *fixture) add(t *testing.T, modelType string, cfg map[string]any, key string) *store.LLMConfig {
	t.Helper()
	c := &store.LLMConfig{ID: "cfg-" + modelType, Owner: store.UserOwner("alice"), Name: "Alice's " + modelType, ModelType: modelType, Config: cfg, IsDefault: true}
	if key != "" {
		sealed, err := f.box.Seal(key, llmconfig.KeyAAD(c.Owner, c.ID))
		if err != nil {
			t.Fatal(err)
		}
		c.APIKeyCipher, c.APIKeyHint = sealed, secrets.Hint(key)
	}
	if err := f.st.CreateLLMConfig(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func aliceCtx() context.Context {
	return auth.WithIdentity(context.Background(), auth.Identity{UserID: "alice", Token: "jwt", Via: auth.ViaJWT})
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	ctx := aliceCtx()

	// No configuration: the server default.
	res, err := f.r.Resolve(ctx, "alice")
	if err != nil || res.Client.Model() != "server-model" || res.Name != "" {
		t.Fatalf("fallback: %+v, %v", res, err)
	}

	c := f.add(t, "text", map[string]any{
		"provider": "openai", "base_url": "http://127.0.0.1:2/v1", "model": "gpt-4o", "temperature": 0.3,
		"context_limit": float64(128), "max_tokens": float64(512), "context_strategy": "conservative", "copilot_mode": "lab_automation_assistant",
		"approval": "changes",
	}, aliceKey)
	res, err = f.r.Resolve(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if res.Client.Model() != "gpt-4o" || res.Name != c.Name || res.Temperature == nil || *res.Temperature != float32(0.3) ||
		res.ContextLimit != 128 || res.MaxTokens != 512 || res.ContextStrategy != "conservative" || res.CopilotMode != "lab_automation_assistant" ||
		res.Approval != "changes" {
		t.Fatalf("resolved = %+v", res)
	}
	// One client per configuration version, reused across turns.
	again, _ := f.r.Resolve(ctx, "alice")
	if again.Client != res.Client {
		t.Fatal("a second turn built a new client")
	}
	c.Config["model"] = "gpt-4.1"
	if _, err := f.st.UpdateLLMConfig(context.Background(), c, 0); err != nil {
		t.Fatal(err)
	}
	updated, _ := f.r.Resolve(ctx, "alice")
	if updated.Client == res.Client || updated.Client.Model() != "gpt-4.1" {
		t.Fatal("an updated configuration kept its old client")
	}
	if len(f.r.clients) != 1 {
		t.Fatalf("%d cached clients, want the current version only", len(f.r.clients))
	}
	// Bob has none: the server default.
	bob, err := f.r.Resolve(auth.WithIdentity(context.Background(), auth.Identity{UserID: "bob"}), "bob")
	if err != nil || bob.Client.Model() != "server-model" {
		t.Fatalf("bob: %+v, %v", bob, err)
	}
}

func TestUnusableConfigurations(t *testing.T) {
	tests := []struct {
		name      string
		modelType string
		cfg       map[string]any
		key       string
		box       func(f *fixture) *secrets.Box
		want      string
	}{
		{"embedding model", "embedding", map[string]any{"provider": "openai", "model": "text-embedding-3-small"}, "", nil, "cannot chat"},
		{"unknown provider without base_url", "text", map[string]any{"provider": "acme", "model": "m1"}, "", nil, "needs a base_url for provider 'acme'"},
		{"key sealed under another key", "text", map[string]any{"provider": "openai", "model": "gpt-4o"}, aliceKey, func(*fixture) *secrets.Box {
			other := make([]byte, secrets.KeyLen)
			_, _ = rand.Read(other)
			b, _ := secrets.NewBox(other)
			return b
		}, "cannot be decrypted; enter it again"},
		{"no encryption key on the server", "text", map[string]any{"provider": "openai", "model": "gpt-4o"}, aliceKey, func(*fixture) *secrets.Box { return nil }, "cannot be decrypted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.add(t, tc.modelType, tc.cfg, tc.key)
			if tc.box != nil {
				f.r = New(Options{Store: f.st, Secrets: tc.box(f), Guard: testGuard})
			}
			_, err := f.r.Resolve(aliceCtx(), "alice")
			var ce *llm.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, tc.want) {
				t.Fatalf("err = %v, want a ConfigError with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), aliceKey) {
				t.Fatal("the error holds the key")
			}
		})
	}
}

func TestProviderDefaultURL(t *testing.T) {
	f := newFixture(t)
	f.add(t, "text", map[string]any{"provider": "ollama", "model": "llama3.1"}, "")
	res, err := f.r.Resolve(aliceCtx(), "alice")
	if err != nil || res.Client.Model() != "llama3.1" {
		t.Fatalf("ollama without base_url: %+v, %v", res, err)
	}
	if u, ok := llmconfig.DefaultBaseURL("ollama"); !ok || !strings.HasPrefix(u, "http://127.0.0.1:11434") {
		t.Fatalf("ollama default URL %q", u)
	}
}
