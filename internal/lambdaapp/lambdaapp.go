// Package lambdaapp runs agentchat routes as AWS Lambda functions: one
// function per endpoint, each mounting only the routes it serves on the
// shared router, over DynamoDB.
//
// A function is described by a Func (its name, the folder under functions/,
// how it is invoked and the "METHOD /path" patterns it serves) whose Builder
// makes the routes from the shared dependencies. Main loads the
// configuration (secrets from SSM Parameter Store, see ResolveSecrets),
// builds the handler and starts the Lambda runtime loop:
//
//   - API functions sit behind the API Gateway HTTP API (payload 2.0) and are
//     served through the api-proxy's httpadapter (buffered responses).
//   - Stream functions sit behind a function URL with InvokeMode
//     RESPONSE_STREAM and are served through lambdaurl; their handler is
//     wrapped so that a panic that escapes the router does not kill the
//     process (lambdaurl runs the handler on a goroutine of its own), a
//     failed write (the client went away) cancels the request, and the
//     request ends before the Lambda deadline so that a turn can persist
//     its statistics. Ending a stream cut by a panic (an error event, then
//     done) is each streaming handler's own job: see the tests of
//     internal/localserver and internal/deploy that panic every streaming
//     route at every event.
//
// Bare functions (Func.Bare) serve public routes from what is built into
// the binary: they read no secret and open no store.
//
// Per-surface packages (sessionsfn, chatfn, gatewayfn, catalogfn,
// apikeysfn, removal) hold the Funcs, so that each function links only
// what its routes need.
package lambdaapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"

	"github.com/aws/aws-lambda-go/lambda"

	"agentchat/internal/config"
	"agentchat/internal/httpapi"
	"agentchat/internal/telemetry"
	"agentchat/internal/wire"
	"agentchat/internal/wire/dynamowire"
)

// Kind is how a function is invoked.
type Kind int

const (
	// API functions sit behind the API Gateway HTTP API (payload format
	// 2.0); their responses are buffered.
	API Kind = iota
	// Stream functions sit behind a function URL with InvokeMode
	// RESPONSE_STREAM; their responses are streamed as written.
	Stream
)

// String returns "api" or "stream".
func (k Kind) String() string {
	if k == Stream {
		return "stream"
	}
	return "api"
}

// App is what a Builder builds routes from: the shared dependencies and the
// environment (secrets resolved). For a bare function (Func.Bare) only
// Config and Logger are set: there is no store and no authenticator.
type App struct {
	*wire.Base
	// Getenv reads the function's environment, secrets included.
	Getenv func(string) string
}

// Builder builds the routes of a function.
type Builder func(ctx context.Context, app *App) ([]httpapi.Route, error)

// Func is one Lambda function serving HTTP routes.
type Func struct {
	// Name is the function's folder under functions/ (e.g. "sessions-list").
	Name string
	// Kind is how the function is invoked.
	Kind Kind
	// Patterns are the "METHOD /path" patterns of the routes served, as
	// httpapi.Route.Pattern returns them.
	Patterns []string
	// Build makes the routes the patterns are selected from.
	Build Builder
	// Bare functions serve public routes only, from what is built into the
	// binary: they read no secret (no SSM call at cold start), open no
	// store and authenticate no one, so they need no permission at all.
	Bare bool
}

// NewFunc returns a Func.
func NewFunc(name string, kind Kind, build Builder, patterns ...string) Func {
	return Func{Name: name, Kind: kind, Patterns: patterns, Build: build}
}

// NewBareFunc returns a bare Func (see Func.Bare): every route of patterns
// must be public.
func NewBareFunc(name string, kind Kind, build Builder, patterns ...string) Func {
	return Func{Name: name, Kind: kind, Patterns: patterns, Build: build, Bare: true}
}

// Find returns the Func named name among funcs (tests look functions up
// by name; the mains name theirs in code, see Main).
func Find(funcs []Func, name string) (Func, error) {
	i := slices.IndexFunc(funcs, func(f Func) bool { return f.Name == name })
	if i < 0 {
		return Func{}, fmt.Errorf("no function named %q", name)
	}
	return funcs[i], nil
}

// LoadConfig loads the configuration with the Lambda defaults (DynamoDB,
// /tmp) and refuses single-user mode: a function is reachable from the
// internet, so JWT_SECRET (or JWT_SECRET_PARAM) is required.
func LoadConfig(getenv func(string) string) (*config.Config, error) {
	cfg, err := config.Load(getenv, config.LambdaDefaults())
	if err != nil {
		return nil, err
	}
	if cfg.SingleUser() {
		return nil, errors.New("JWT_SECRET (or JWT_SECRET_PARAM, the name of an SSM SecureString parameter) is required in AWS Lambda: " +
			"single-user mode is for a local server on the loopback only")
	}
	return cfg, nil
}

// Handler builds f's handler: the configuration from getenv, the shared
// dependencies (logs as JSON to logOut), the routes of f.Patterns on the
// shared router, and the middleware of f.Kind. release closes the store.
// A bare function gets only the configuration and the logger (no secret is
// required and no store is opened; release does nothing).
func (f Func) Handler(ctx context.Context, getenv func(string) string, logOut io.Writer) (h http.Handler, release func() error, err error) {
	if f.Build == nil || len(f.Patterns) == 0 {
		return nil, nil, fmt.Errorf("function %s: no routes", f.Name)
	}
	if f.Bare {
		h, err := f.bareHandler(ctx, getenv, logOut)
		return h, func() error { return nil }, err
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return nil, nil, err
	}
	log := wire.NewLogger(logOut, cfg.LogLevel).With("function", f.Name)
	base, err := wire.NewBase(ctx, cfg, log, dynamowire.Open)
	if err != nil {
		return nil, nil, err
	}
	routes, err := f.routes(ctx, &App{Base: base, Getenv: getenv})
	if err != nil {
		_ = base.Close()
		return nil, nil, err
	}
	// Spans are exported before each invocation returns (a frozen
	// environment exports nothing).
	return telemetry.FlushAfter(f.middleware(base.Router, routes, log), base.Telemetry, log), base.Close, nil
}

// bareHandler builds the handler of a bare function: the configuration
// (no secret required), the logger and the public routes of f.Patterns on
// the shared router without an authenticator.
func (f Func) bareHandler(ctx context.Context, getenv func(string) string, logOut io.Writer) (http.Handler, error) {
	cfg, err := config.Load(getenv, config.LambdaDefaults())
	if err != nil {
		return nil, err
	}
	log := wire.NewLogger(logOut, cfg.LogLevel).With("function", f.Name)
	routes, err := f.routes(ctx, &App{Base: &wire.Base{Config: cfg, Logger: log}, Getenv: getenv})
	if err != nil {
		return nil, err
	}
	for _, rt := range routes {
		if !rt.Public {
			return nil, fmt.Errorf("function %s: route %q needs authentication, which a bare function (no secret, no store) cannot do", f.Name, rt.Pattern())
		}
	}
	router := func(routes ...httpapi.Route) http.Handler {
		return httpapi.NewRouter(httpapi.Deps{Logger: log}, routes...)
	}
	return f.middleware(router, routes, log), nil
}

// middleware mounts routes on router with the middleware of f.Kind.
func (f Func) middleware(router func(...httpapi.Route) http.Handler, routes []httpapi.Route, log *slog.Logger) http.Handler {
	if f.Kind == Stream {
		return streamMiddleware(router(routes...), log)
	}
	return apiMiddleware(router(routes...), log)
}

// routes builds the routes of f and keeps those of f.Patterns.
func (f Func) routes(ctx context.Context, app *App) ([]httpapi.Route, error) {
	all, err := f.Build(ctx, app)
	if err != nil {
		return nil, fmt.Errorf("function %s: build routes: %w", f.Name, err)
	}
	routes, err := httpapi.Select(all, f.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	return routes, nil
}

// Main runs the function fn describes (a per-surface package's
// exported function, so that the compiler checks it exists): it resolves
// the secrets (but for a bare function, which reads none), builds the
// handler and serves invocations until the runtime stops the process. A
// function that cannot start logs why on stderr and exits 1.
func Main(fn func() Func) {
	ctx := context.Background()
	f := fn()
	getenv := os.Getenv
	if !f.Bare {
		var err error
		getenv, err = ResolveSecrets(ctx, os.Getenv, nil)
		if err != nil {
			Exit(f.Name, err)
		}
	}
	h, _, err := f.Handler(ctx, getenv, os.Stdout)
	if err != nil {
		Exit(f.Name, err)
	}
	if f.Kind == Stream {
		lambda.Start(FunctionURL(h))
		return
	}
	lambda.Start(APIGateway(h))
}

// Exit logs that function name could not start, as one JSON line on
// stderr, and exits with status 1 (Lambda reports Runtime.ExitError and
// the log line says why).
func Exit(name string, err error) {
	slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("function failed to start", "function", name, "err", err.Error())
	os.Exit(1)
}
