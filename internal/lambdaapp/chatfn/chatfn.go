// Package chatfn holds the Lambda functions of the streaming project chat:
// chat-stream (POST /stream, a response-streaming function URL emitting
// SSE) and chat-abort (POST /sessions/{session_id}/abort, behind the HTTP
// API, which only sets the abort flag in the store).
package chatfn

import (
	"context"
	"fmt"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/wire/agentwire"
)

// Funcs returns the chat functions.
func Funcs() []lambdaapp.Func {
	return []lambdaapp.Func{
		lambdaapp.NewFunc("chat-stream", lambdaapp.Stream, buildStream, http.MethodPost+" "+chat.PathStream),
		lambdaapp.NewFunc("chat-abort", lambdaapp.API, buildAbort, http.MethodPost+" "+chat.PathAbort),
	}
}

// Main runs the chat function named name.
func Main(name string) { lambdaapp.Main(Funcs(), name) }

func buildStream(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	ag, err := agentwire.New(app.Config, app.Store, app.Logger)
	if err != nil {
		return nil, fmt.Errorf("build agents: %w", err)
	}
	return chat.New(chat.Options{Runtime: ag.Runtime, Store: app.Store, Heartbeat: app.Config.Heartbeat, Logger: app.Logger}).Routes(), nil
}

func buildAbort(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return chat.New(chat.Options{Store: app.Store, Logger: app.Logger}).Routes(), nil
}
