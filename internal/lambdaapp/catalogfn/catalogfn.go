// Package catalogfn holds the Lambda functions of the agent gateway (/v1)
// that run no agent, both behind the HTTP API: v1-root (GET /v1 and /v1/,
// the public status) and v1-agents (GET /v1/agents, the agent list). They
// answer exactly as package gateway does, the list coming from the static
// catalogue of package catalog, so that neither links the LLM client, the
// agents or their tools; v1-root is bare (lambdaapp.Func.Bare): it reads no
// secret and opens no store.
package catalogfn

import (
	"context"
	"net/http"

	"agentchat/internal/agents/catalog"
	"agentchat/internal/httpapi"
	"agentchat/internal/lambdaapp"
)

// Function names (folders under functions/).
const (
	// RootFunction serves GET /v1/ and GET /v1.
	RootFunction = "v1-root"
	// AgentsFunction serves GET /v1/agents.
	AgentsFunction = "v1-agents"
)

// Route paths, the same as package gateway's.
const (
	// PathRoot matches exactly "/v1/".
	PathRoot     = "/v1/{$}"
	PathRootBare = "/v1"
	PathAgents   = "/v1/agents"
)

// Funcs returns the functions v1-root and v1-agents.
func Funcs() []lambdaapp.Func { return []lambdaapp.Func{V1Root(), V1Agents()} }

// V1Root is the function v1-root, bare: it serves public routes only.
func V1Root() lambdaapp.Func {
	get := http.MethodGet + " "
	return lambdaapp.NewBareFunc(RootFunction, lambdaapp.API, build, get+PathRoot, get+PathRootBare)
}

// V1Agents is the function v1-agents.
func V1Agents() lambdaapp.Func {
	return lambdaapp.NewFunc(AgentsFunction, lambdaapp.API, build, http.MethodGet+" "+PathAgents)
}

// Routes returns the status routes (public) and the agent list (which
// needs a JWT or an API key), with OpenAI-style errors.
func Routes() []httpapi.Route {
	open := httpapi.StyleOpenAI
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathRoot, Handler: status, Public: true, Style: open},
		{Method: http.MethodGet, Path: PathRootBare, Handler: status, Public: true, Style: open},
		{Method: http.MethodGet, Path: PathAgents, Handler: agentList, Style: open},
	}
}

func build(context.Context, *lambdaapp.App) ([]httpapi.Route, error) { return Routes(), nil }

func status(w http.ResponseWriter, _ *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func agentList(w http.ResponseWriter, _ *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, catalog.Entries())
}
