// Package gatewayfn holds the Lambda functions of the agent gateway (/v1)
// that run agents: v1-chat-sync behind the HTTP API, v1-chat (token SSE)
// and openai behind response-streaming function URLs. The openai function
// serves /v1/models, /v1/models/{id} and /v1/chat/completions together,
// since OpenAI clients use one base URL. The gateway's status and agent
// list (v1-root, v1-agents) link no agent code: see package catalogfn.
package gatewayfn

import (
	"context"
	"fmt"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/httpapi/llmconfigs"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/wire/agentwire"
)

// Funcs returns the gateway functions.
func Funcs() []lambdaapp.Func {
	get, post := http.MethodGet+" ", http.MethodPost+" "
	return []lambdaapp.Func{
		lambdaapp.NewFunc("v1-chat", lambdaapp.Stream, buildRuntime, post+gateway.PathChat),
		lambdaapp.NewFunc("v1-chat-sync", lambdaapp.API, buildRuntime, post+gateway.PathChatSync),
		lambdaapp.NewFunc("openai", lambdaapp.Stream, buildRuntime, get+gateway.PathModels, get+gateway.PathModel, post+gateway.PathCompletions),
	}
}

// Main runs the gateway function named name.
func Main(name string) { lambdaapp.Main(Funcs(), name) }

// buildRuntime serves the routes that run agents.
func buildRuntime(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	ag, err := agentwire.New(app.Base, llmconfigs.NewGroupSource(app.GNS3, nil, 0))
	if err != nil {
		return nil, fmt.Errorf("build agents: %w", err)
	}
	return gateway.New(gateway.Options{Runtime: ag.Runtime, Agents: ag.Registry, Heartbeat: app.Config.Heartbeat, Logger: app.Logger,
		Rates: app.Store}).Routes(), nil
}
