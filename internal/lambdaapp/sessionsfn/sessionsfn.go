// Package sessionsfn holds the Lambda functions of the session routes of
// the project chat (list, history, rename, delete, pin, unpin, and
// chat-abort, which only sets the session's abort flag): API
// functions that link the store and the router, and no LLM client.
package sessionsfn

import (
	"context"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/lambdaapp"
)

// Funcs returns the session functions.
func Funcs() []lambdaapp.Func {
	return []lambdaapp.Func{SessionsList(), SessionsHistory(), SessionsRename(), SessionsDelete(), SessionsPin(), SessionsUnpin(), ChatAbort()}
}

// SessionsList is the function sessions-list.
func SessionsList() lambdaapp.Func { return api("sessions-list", http.MethodGet, sessions.PathList) }

// SessionsHistory is the function sessions-history.
func SessionsHistory() lambdaapp.Func {
	return api("sessions-history", http.MethodGet, sessions.PathHistory)
}

// SessionsRename is the function sessions-rename.
func SessionsRename() lambdaapp.Func {
	return api("sessions-rename", http.MethodPatch, sessions.PathSession)
}

// SessionsDelete is the function sessions-delete.
func SessionsDelete() lambdaapp.Func {
	return api("sessions-delete", http.MethodDelete, sessions.PathSession)
}

// SessionsPin is the function sessions-pin.
func SessionsPin() lambdaapp.Func { return api("sessions-pin", http.MethodPut, sessions.PathPin) }

// SessionsUnpin is the function sessions-unpin.
func SessionsUnpin() lambdaapp.Func {
	return api("sessions-unpin", http.MethodDelete, sessions.PathPin)
}

// ChatAbort is the function chat-abort.
func ChatAbort() lambdaapp.Func { return api("chat-abort", http.MethodPost, sessions.PathAbort) }

// api is an API function serving one route of the session handlers.
func api(name, method, path string) lambdaapp.Func {
	return lambdaapp.NewFunc(name, lambdaapp.API, build, method+" "+path)
}

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return sessions.New(app.Store, nil, nil).Routes(), nil
}
