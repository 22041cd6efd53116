// Package localserver runs every agentchat route in one net/http server
// over an embedded SQLite file (or DynamoDB with STORE=dynamodb, in the
// binary that links it: functions/local/withdynamo): the `make run`
// experience.
package localserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"agentchat/internal/config"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
	"agentchat/internal/telemetry"
	"agentchat/internal/wire"
)

// SQLiteFile is the database file name inside DATA_DIR.
const SQLiteFile = "agentchat.db"

// ShutdownGrace is how long in-flight requests may take to finish after a
// shutdown signal before their contexts are cancelled.
const ShutdownGrace = 30 * time.Second

// FinishGrace is how long cancelled requests may take to persist and end
// after ShutdownGrace.
const FinishGrace = 20 * time.Second

// StoreOpener returns the opener of the configured store: the SQLite file
// in DataDir, or DynamoDB (STORE=dynamodb) with dynamo, which may be nil
// in a binary that links no AWS SDK (functions/local): STORE=dynamodb is
// then refused with a message naming the command that has it. Either
// store tells its turns of an abort at once (store.WithAbortNotifications).
func StoreOpener(dynamo wire.StoreOpener) wire.StoreOpener {
	return func(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error) {
		// The abort route and the turns share this process: an abort wakes
		// its turn at once instead of at the turn's next poll of the flag.
		if cfg.Store == config.StoreDynamoDB {
			if dynamo == nil {
				return nil, errors.New("STORE=dynamodb: this local server links SQLite only; run `go run ./functions/local/withdynamo` for DynamoDB")
			}
			st, err := dynamo(ctx, cfg, log)
			if err != nil {
				return nil, err
			}
			return store.WithAbortNotifications(st), nil
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data dir %s: %w", cfg.DataDir, err)
		}
		path := filepath.Join(cfg.DataDir, SQLiteFile)
		// With tracing on (wire.NewBase reads the same variables), a client
		// span per SQLite statement; off, the plain driver.
		st, err := sqlite.Open(ctx, path, sqlite.WithLimits(wire.Limits(cfg)), sqlite.WithTracing(telemetry.Enabled(os.Getenv)))
		if err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
		return store.WithAbortNotifications(st), nil
	}
}

// Run loads the configuration from getenv, builds every route and serves
// until ctx is done, then shuts down gracefully, on SQLite (see RunWith for
// DynamoDB). It prints the URL and the mode to out; logs go to logOut as
// JSON. ready, when not nil, receives the listen address once the server
// accepts connections.
func Run(ctx context.Context, getenv func(string) string, out, logOut io.Writer, ready chan<- string) error {
	return RunWith(ctx, getenv, out, logOut, ready, nil)
}

// RunWith is Run that serves STORE=dynamodb with the store dynamo opens
// (dynamowire.Open).
func RunWith(ctx context.Context, getenv func(string) string, out, logOut io.Writer, ready chan<- string, dynamo wire.StoreOpener) error {
	return run(ctx, getenv, out, logOut, ready, DefaultTimeouts(), dynamo)
}

// run is RunWith with the server's timeouts (tests shorten them).
func run(ctx context.Context, getenv func(string) string, out, logOut io.Writer, ready chan<- string, timeouts Timeouts, dynamo wire.StoreOpener) error {
	cfg, err := config.Load(getenv, config.LocalDefaults())
	if err != nil {
		return err // one line per problem, under "invalid configuration:"
	}
	if cfg.SingleUser() {
		if err := config.CheckLoopback(cfg.Addr); err != nil {
			return fmt.Errorf("refusing to start: %w", err)
		}
	}
	log := wire.NewLogger(logOut, cfg.LogLevel)
	base, err := wire.NewBase(ctx, cfg, log, StoreOpener(dynamo))
	if err != nil {
		return err
	}
	defer func() { _ = base.Close() }()

	handler, cleanup, err := Handler(ctx, base)
	if err != nil {
		return err
	}
	defer cleanup()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	baseCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := newHTTPServer(handler, timeouts)
	srv.BaseContext = func(net.Listener) context.Context { return baseCtx }
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	addr := ln.Addr().String()
	fmt.Fprintf(out, "agentchat listening on http://%s\n", addr)
	fmt.Fprintf(out, "mode: %s\n", describeMode(cfg))
	fmt.Fprintf(out, "store: %s\n", describeStore(cfg))
	fmt.Fprintf(out, "llm: %s\n", describeLLM(cfg))
	log.Info("server started", "addr", addr, "config", cfg)
	if ready != nil {
		ready <- addr
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", ShutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Streams still open: cancel them, and give their turns the time
		// to persist their steps and statistics and to end their streams
		// with done, before the store is closed.
		cancelRequests()
		finishCtx, cancelFinish := context.WithTimeout(context.Background(), FinishGrace)
		defer cancelFinish()
		if err = srv.Shutdown(finishCtx); errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("server stopped")
	return nil
}

func describeMode(cfg *config.Config) string {
	if cfg.SingleUser() {
		return "single-user (no JWT_SECRET: every request is user \"local\"; loopback only)"
	}
	return "JWT (Authorization: Bearer <HS256 token> or an API key)"
}

func describeStore(cfg *config.Config) string {
	if cfg.Store == config.StoreDynamoDB {
		if cfg.DynamoDBEndpoint != "" {
			return "dynamodb table " + cfg.TableName + " at " + cfg.DynamoDBEndpoint
		}
		return "dynamodb table " + cfg.TableName
	}
	return "sqlite " + filepath.Join(cfg.DataDir, SQLiteFile)
}

func describeLLM(cfg *config.Config) string {
	if !cfg.LLMConfigured() {
		return "not configured (set OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL)"
	}
	where := cfg.OpenAIBaseURL
	if where == "" {
		where = "OpenAI"
	}
	return cfg.OpenAIModel + " at " + where
}
