// Package userllm resolves the LLM a user's turn runs on (see Resolver).
// It is apart from package llmconfig, whose domain it uses, so that the
// functions that only manage the configurations link no LLM client.
package userllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/llm"
	"agentchat/internal/llmconfig"
	"agentchat/internal/pricing"
	"agentchat/internal/secrets"
	"agentchat/internal/store"
)

// maxClients bounds the cached clients; past it the cache is emptied.
const maxClients = 4096

// Options configure a Resolver.
type Options struct {
	// Store holds the configurations.
	Store store.LLMConfigs
	// Groups tells the caller's groups (nil: no groups).
	Groups llmconfig.GroupSource
	// Secrets opens sealed API keys; nil: a configuration with a key
	// cannot be used (a clear error).
	Secrets *secrets.Box
	// Fallback resolves users without a configuration (the server default).
	Fallback llm.Resolver
	// Guard is the address policy of the configurations' base URLs
	// (LLM_ALLOW_PRIVATE_HOSTS; Local in single-user mode). The zero
	// Guard refuses every address that is not public. Every
	// configuration's requests share one guarded connection pool
	// (llm.NewGuardedHTTPClient), apart from the server default's.
	Guard llm.Guard
	// MaxAnswerBytes caps one answer (llm.Config.MaxAnswerBytes,
	// LLM_MAX_ANSWER_BYTES; 0: llm.DefaultMaxAnswerBytes).
	MaxAnswerBytes int
	// CallTimeout bounds a streamed LLM call until its first token and a
	// non-streamed one as a whole (llm.Config.CallTimeout).
	CallTimeout time.Duration
	// IdleTimeout bounds the silence between two chunks of a started
	// stream (llm.Config.IdleTimeout).
	IdleTimeout time.Duration
	// Logger receives the clients' logs (nil: slog.Default()).
	Logger *slog.Logger
}

// Resolver is the llm.Resolver of a user's turn: the user's default LLM
// model configuration (own, else a group's, see llmconfig.Effective), else the
// server default. It opens the configuration's sealed API key only to
// build the client, keeps one client per configuration version (reused
// across turns, replaced once the configuration changes), and turns an
// unusable configuration into a clear error instead of calling the
// provider without a key. A configuration's base URL is the user's: its
// calls go through an llm.Guard (no loopback, private, link-local or
// metadata address unless LLM_ALLOW_PRIVATE_HOSTS allows it), checked
// when the client is built for an address written in the URL and on
// every connection. Safe for concurrent use.
type Resolver struct {
	o  Options
	hc *http.Client // guarded by o.Guard, shared by the clients

	mu      sync.Mutex
	clients map[clientKey]llm.Client
}

// clientKey names one version of one configuration.
type clientKey struct {
	owner   store.Owner
	id      string
	version int64
}

// New returns a resolver with the defaults applied to o.
func New(o Options) *Resolver {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Fallback == nil {
		o.Fallback = llm.NewStaticResolver(nil)
	}
	return &Resolver{o: o, hc: llm.NewGuardedHTTPClient(o.Guard), clients: map[clientKey]llm.Client{}}
}

// Resolve implements llm.Resolver: the caller's effective configuration
// (the identity in ctx; userID when there is none), else the fallback.
func (r *Resolver) Resolve(ctx context.Context, userID string) (llm.Resolved, error) {
	id, ok := auth.FromContext(ctx)
	if !ok || id.UserID != userID {
		id = auth.Identity{UserID: userID}
	}
	cfg, _, err := llmconfig.Effective(ctx, r.o.Store, r.o.Groups, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return r.o.Fallback.Resolve(ctx, userID)
	case err != nil:
		return llm.Resolved{}, fmt.Errorf("user llm configuration: %w", err)
	}
	return r.resolved(cfg)
}

// resolved turns a configuration into its client and settings.
func (r *Resolver) resolved(cfg *store.LLMConfig) (llm.Resolved, error) {
	s := settingsOf(cfg)
	if !canChat(cfg.ModelType) {
		return llm.Resolved{}, &llm.ConfigError{Message: fmt.Sprintf(
			"The LLM configuration '%s' is a %s model, which cannot chat: make a text, vision or multimodal configuration your default.", cfg.Name, cfg.ModelType)}
	}
	if s.model == "" {
		return llm.Resolved{}, &llm.ConfigError{Message: fmt.Sprintf("The LLM configuration '%s' names no model.", cfg.Name)}
	}
	baseURL := s.baseURL
	if baseURL == "" {
		var known bool
		if baseURL, known = llmconfig.DefaultBaseURL(s.provider); !known {
			return llm.Resolved{}, &llm.ConfigError{Message: fmt.Sprintf("The LLM configuration '%s' needs a base_url for provider '%s'.", cfg.Name, s.provider)}
		}
	}
	if err := r.o.Guard.CheckURL(baseURL); err != nil {
		return llm.Resolved{}, &llm.ConfigError{Message: fmt.Sprintf("The LLM configuration '%s' cannot be used. %s", cfg.Name, err)}
	}
	prices, err := pricing.FromConfig(cfg.Config)
	if err != nil {
		return llm.Resolved{}, &llm.ConfigError{Message: fmt.Sprintf("The LLM configuration '%s' has a bad price: %v.", cfg.Name, err)}
	}
	c, err := r.client(cfg, baseURL, s.model)
	if err != nil {
		return llm.Resolved{}, err
	}
	return llm.Resolved{
		Client: c, Name: cfg.Name, Temperature: s.temperature, MaxTokens: s.maxTokens,
		ContextLimit: s.contextLimit, ContextStrategy: s.strategy, CopilotMode: s.copilotMode,
		Approval: s.approval, Prices: prices,
	}, nil
}

// client returns the cached client of this configuration version, or
// builds it (opening the API key once).
func (r *Resolver) client(cfg *store.LLMConfig, baseURL, model string) (llm.Client, error) {
	k := clientKey{owner: cfg.Owner, id: cfg.ID, version: cfg.Version}
	r.mu.Lock()
	c, ok := r.clients[k]
	r.mu.Unlock()
	if ok {
		return c, nil
	}
	key := ""
	if cfg.APIKeyCipher != "" {
		if r.o.Secrets == nil {
			return nil, &llm.ConfigError{Message: fmt.Sprintf("The API key of configuration '%s' cannot be decrypted: this server has no encryption key. Enter it again once ENCRYPTION_KEY is set.", cfg.Name)}
		}
		var err error
		if key, err = r.o.Secrets.Open(cfg.APIKeyCipher, llmconfig.KeyAAD(cfg.Owner, cfg.ID)); err != nil || key == "" {
			return nil, &llm.ConfigError{Message: fmt.Sprintf("The API key of configuration '%s' cannot be decrypted; enter it again.", cfg.Name)}
		}
	}
	c, err := llm.NewClient(llm.Config{APIKey: key, BaseURL: baseURL, Model: model,
		CallTimeout: r.o.CallTimeout, IdleTimeout: r.o.IdleTimeout, MaxAnswerBytes: r.o.MaxAnswerBytes},
		llm.WithLogger(r.o.Logger), llm.WithHTTPClient(r.hc))
	if err != nil {
		return nil, &llm.ConfigError{Message: fmt.Sprintf("The LLM configuration '%s' cannot be used: %v", cfg.Name, err)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.clients) >= maxClients {
		clear(r.clients)
	}
	// Older versions of this configuration are of no use any more.
	for old := range r.clients {
		if old.owner == k.owner && old.id == k.id {
			delete(r.clients, old)
		}
	}
	r.clients[k] = c
	return c, nil
}

// canChat reports whether a model type can answer a chat.
func canChat(modelType string) bool {
	switch modelType {
	case "text", "vision", "multimodal", "":
		return true
	}
	return false
}

// settings are the values of a configuration's config object.
type settings struct {
	provider, baseURL, model string
	temperature              *float32
	maxTokens, contextLimit  int
	strategy, copilotMode    string
	approval                 string
}

func settingsOf(cfg *store.LLMConfig) settings {
	c := cfg.Config
	s := settings{
		provider: str(c["provider"]), baseURL: str(c["base_url"]), model: str(c["model"]),
		strategy: str(c["context_strategy"]), copilotMode: str(c["copilot_mode"]), approval: str(c["approval"]),
		maxTokens: num(c["max_tokens"]), contextLimit: num(c["context_limit"]),
	}
	switch t := c["temperature"].(type) {
	case float64:
		f := float32(t)
		s.temperature = &f
	case json.Number:
		if v, err := t.Float64(); err == nil {
			f := float32(v)
			s.temperature = &f
		}
	}
	return s
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a JSON number as an int (0 when absent or not a number).
func num(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case int:
		return n
	case int64:
		return int(n)
	}
	return 0
}
