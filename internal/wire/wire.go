// Package wire builds agentchat's shared dependencies from the typed
// configuration: the logger, the store, the authenticator and the project
// directory. It holds no LLM or agent code, so that functions serving only
// session routes stay small; see package agentwire for those.
package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/config"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/logctx"
	"agentchat/internal/secrets"
	"agentchat/internal/store"
	"agentchat/internal/telemetry"
)

// NewLogger returns a JSON logger at the configured level; records logged
// with a context also carry the context's attributes (request id, user).
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(logctx.NewHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})))
}

// StoreOpener opens the store a process uses (dynamowire.Open: the
// DynamoDB table, apart so that a process on SQLite links no AWS SDK).
type StoreOpener func(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error)

// Limits are the per-user limits of cfg (MAX_SESSIONS_PER_USER,
// MAX_LLM_CONFIGS_PER_USER, MAX_API_KEYS_PER_USER), which the store
// enforces.
func Limits(cfg *config.Config) store.Limits {
	return store.Limits{
		SessionsPerUser:    cfg.MaxSessionsPerUser,
		LLMConfigsPerOwner: cfg.MaxLLMConfigsPerUser,
		APIKeysPerUser:     cfg.MaxAPIKeysPerUser,
	}
}

// Base is what every route needs.
type Base struct {
	Config   *config.Config
	Logger   *slog.Logger
	Store    store.Store
	Auth     *auth.Authenticator
	Projects gns3.ProjectDirectory
	// GNS3 is the controller client, nil without GNS3_URL.
	GNS3 *gns3.Client
	// Secrets seals and opens the API keys of LLM configurations: the
	// box of ENCRYPTION_KEY (and ENCRYPTION_KEY_PREVIOUS, which only
	// open). Nil when no key is configured: routes that seal a key then
	// answer 503 (the local server calls UseLocalKey first).
	Secrets *secrets.Box
	// Telemetry is the tracing of OTEL_EXPORTER_OTLP_ENDPOINT, nil when
	// it is off (see package telemetry).
	Telemetry *telemetry.Provider
	// Metrics counts what the process serves when METRICS=on (the local
	// server answers them at GET /metrics), nil when off.
	Metrics *telemetry.Metrics
}

// NewBase builds the shared dependencies from cfg, opening the store with
// open.
func NewBase(ctx context.Context, cfg *config.Config, log *slog.Logger, open StoreOpener) (*Base, error) {
	st, err := open(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	a, err := auth.NewAuthenticator(cfg.JWTSecret, st, time.Now, auth.WithLogger(log))
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("build authenticator: %w", err)
	}
	b := &Base{Config: cfg, Logger: log, Store: st, Auth: a, Projects: gns3.OpenDirectory{}}
	if b.Telemetry, err = telemetry.New(ctx, os.Getenv); err != nil {
		_ = st.Close()
		return nil, err
	}
	if cfg.Metrics {
		b.Metrics = telemetry.NewMetrics()
	}
	if cfg.EncryptionKey != nil {
		box, err := secrets.NewBox(cfg.EncryptionKey, cfg.EncryptionKeysPrevious...)
		if err != nil {
			_ = st.Close()
			return nil, fmt.Errorf("ENCRYPTION_KEY: %w", err)
		}
		b.Secrets = box
	}
	if cfg.GNS3Configured() {
		// With tracing on, a client span per GNS3 request.
		c, err := gns3.New(cfg.GNS3URL, &http.Client{Timeout: 15 * time.Second, Transport: telemetry.Transport(gns3.NewTransport(), b.Telemetry, "gns3")})
		if err != nil {
			_ = st.Close()
			return nil, fmt.Errorf("gns3 client: %w", err)
		}
		b.GNS3 = c
		b.Projects = gns3.NewGNS3Directory(c, gns3.DefaultCacheTTL)
	}
	return b, nil
}

// UseLocalKey gives a base without ENCRYPTION_KEY the key stored in
// DATA_DIR (secrets.LoadOrCreateKey: created on first use), still opening
// with ENCRYPTION_KEY_PREVIOUS. The local server calls it; AWS Lambda,
// whose disk does not last, reads the key from SSM instead.
func (b *Base) UseLocalKey() error {
	if b.Secrets != nil {
		return nil
	}
	key, err := secrets.LoadOrCreateKey(b.Config.DataDir)
	if err != nil {
		return fmt.Errorf("encryption key in %s: %w", b.Config.DataDir, err)
	}
	box, err := secrets.NewBox(key, b.Config.EncryptionKeysPrevious...)
	clear(key)
	if err != nil {
		return fmt.Errorf("encryption key in %s: %w", b.Config.DataDir, err)
	}
	b.Secrets = box
	return nil
}

// Router returns the handler serving routes with the shared middleware.
func (b *Base) Router(routes ...httpapi.Route) http.Handler {
	return httpapi.NewRouter(httpapi.Deps{Auth: b.Auth, Projects: b.Projects, Logger: b.Logger, SingleUser: b.Config.SingleUser(), Tracer: b.Telemetry.Tracer(), Metrics: b.Metrics}, routes...)
}

// RemovalPolicy is who may remove a project's chat: the admin token, the
// local user, or anyone once the GNS3 controller reports the project gone.
func (b *Base) RemovalPolicy() sessions.RemovalPolicy {
	p := sessions.RemovalPolicy{AdminToken: b.Config.AdminToken, Auth: b.Auth}
	if b.GNS3 != nil {
		p.Projects = b.Projects
	}
	return p
}

// Close waits for background API-key bookkeeping, then releases the store
// and exports the spans not yet exported.
func (b *Base) Close() error {
	b.Auth.WaitTouches()
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.FlushTimeout)
	defer cancel()
	return errors.Join(b.Store.Close(), b.Telemetry.Shutdown(ctx))
}
