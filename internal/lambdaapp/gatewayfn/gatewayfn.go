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
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/llmconfig"
	"agentchat/internal/wire/agentwire"
)

// Funcs returns the gateway functions.
func Funcs() []lambdaapp.Func { return []lambdaapp.Func{V1Chat(), V1ChatSync(), OpenAI()} }

// V1Chat is the function v1-chat, streamed.
func V1Chat() lambdaapp.Func {
	return lambdaapp.NewFunc("v1-chat", lambdaapp.Stream, buildRuntime, http.MethodPost+" "+gateway.PathChat)
}

// V1ChatSync is the function v1-chat-sync.
func V1ChatSync() lambdaapp.Func {
	return lambdaapp.NewFunc("v1-chat-sync", lambdaapp.API, buildRuntime, http.MethodPost+" "+gateway.PathChatSync)
}

// OpenAI is the function openai: the OpenAI-compatible models and chat
// completions, streamed, and the calling key's usage (GET /v1/usage).
func OpenAI() lambdaapp.Func {
	get, post := http.MethodGet+" ", http.MethodPost+" "
	return lambdaapp.NewFunc("openai", lambdaapp.Stream, buildRuntime, get+gateway.PathModels, get+gateway.PathModel, post+gateway.PathCompletions,
		get+gateway.PathUsage)
}

// buildRuntime serves the routes that run agents.
func buildRuntime(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	ag, err := agentwire.New(app.Base, llmconfig.NewGroupSource(app.GNS3, userpath.New(app.GNS3), 0))
	if err != nil {
		return nil, fmt.Errorf("build agents: %w", err)
	}
	return gateway.New(gateway.Options{Runtime: ag.Runtime, Agents: ag.Registry, Heartbeat: app.Config.Heartbeat, Logger: app.Logger,
		Rates: app.Store, Ledger: app.Store}).Routes(), nil
}
