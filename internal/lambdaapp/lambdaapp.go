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
//     wrapped so that a panic ends the SSE stream with an error and a done
//     event instead of killing the process, a failed write (the client went
//     away) cancels the request, and the request ends before the Lambda
//     deadline so that a turn can persist its statistics.
//
// Per-surface packages (sessionsfn, chatfn, gatewayfn, apikeysfn, removal)
// hold the Funcs, so that each function links only what its routes need.
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
	"agentchat/internal/wire"
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
// environment (secrets resolved).
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
}

// NewFunc returns a Func.
func NewFunc(name string, kind Kind, build Builder, patterns ...string) Func {
	return Func{Name: name, Kind: kind, Patterns: patterns, Build: build}
}

// Find returns the Func named name.
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
func (f Func) Handler(ctx context.Context, getenv func(string) string, logOut io.Writer) (h http.Handler, release func() error, err error) {
	if f.Build == nil || len(f.Patterns) == 0 {
		return nil, nil, fmt.Errorf("function %s: no routes", f.Name)
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return nil, nil, err
	}
	log := wire.NewLogger(logOut, cfg.LogLevel).With("function", f.Name)
	base, err := wire.NewBase(ctx, cfg, log, wire.OpenDynamo)
	if err != nil {
		return nil, nil, err
	}
	routes, err := f.Build(ctx, &App{Base: base, Getenv: getenv})
	if err != nil {
		_ = base.Close()
		return nil, nil, fmt.Errorf("function %s: build routes: %w", f.Name, err)
	}
	routes, err = selectRoutes(routes, f.Patterns)
	if err != nil {
		_ = base.Close()
		return nil, nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	if f.Kind == Stream {
		for i := range routes {
			routes[i].Handler = recoverStream(routes[i].Handler, routes[i].Style)
		}
		return streamMiddleware(base.Router(routes...), log), base.Close, nil
	}
	return apiMiddleware(base.Router(routes...), log), base.Close, nil
}

// selectRoutes returns the routes of patterns, or an error naming a pattern
// no route has.
func selectRoutes(routes []httpapi.Route, patterns []string) ([]httpapi.Route, error) {
	for _, p := range patterns {
		if !slices.ContainsFunc(routes, func(rt httpapi.Route) bool { return rt.Pattern() == p }) {
			return nil, fmt.Errorf("no route %q among the routes built", p)
		}
	}
	return httpapi.Select(routes, patterns...), nil
}

// Main runs the function named name among funcs: it resolves the secrets,
// builds the handler and serves invocations until the runtime stops the
// process. A function that cannot start logs why on stderr and exits 1.
func Main(funcs []Func, name string) {
	ctx := context.Background()
	f, err := Find(funcs, name)
	if err != nil {
		Exit(name, err)
	}
	getenv, err := ResolveSecrets(ctx, os.Getenv, nil)
	if err != nil {
		Exit(name, err)
	}
	h, _, err := f.Handler(ctx, getenv, os.Stdout)
	if err != nil {
		Exit(name, err)
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
