// Package chatfn holds the Lambda function of the streaming project chat:
// chat-stream (POST /stream, POST /inject, POST .../approvals and the
// rejoin GET .../sessions/{session_id}/stream, a response-streaming
// function URL emitting SSE). chat-abort only sets a store flag, so it
// lives in sessionsfn and links no LLM client.
package chatfn

import (
	"context"
	"fmt"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
	"agentchat/internal/wire/agentwire"
)

// Funcs returns the chat function.
func Funcs() []lambdaapp.Func { return []lambdaapp.Func{ChatStream()} }

// ChatStream is the function chat-stream: the project stream, fault
// injection, approval decisions and the rejoin of a session's stream,
// streamed.
func ChatStream() lambdaapp.Func {
	post := http.MethodPost + " "
	return lambdaapp.NewFunc("chat-stream", lambdaapp.Stream, buildStream, post+chat.PathStream, post+chat.PathInject, post+chat.PathApprovals,
		http.MethodGet+" "+chat.PathRejoin)
}

func buildStream(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	ag, err := agentwire.New(app.Base, llmconfig.NewGroupSource(app.GNS3, userpath.New(app.GNS3), 0))
	if err != nil {
		return nil, fmt.Errorf("build agents: %w", err)
	}
	o := chat.Options{Runtime: ag.Runtime, Heartbeat: app.Config.Heartbeat, Logger: app.Logger, Store: app.Store}
	if app.Config.TurnLog {
		o.TurnLogs, o.TurnLogKeep = app.Store, app.Config.TurnTimeout+store.TurnLogKeep
	}
	return chat.New(o).Routes(), nil
}
