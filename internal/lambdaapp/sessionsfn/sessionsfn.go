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
	return []lambdaapp.Func{
		lambdaapp.NewFunc("sessions-list", lambdaapp.API, build, http.MethodGet+" "+sessions.PathList),
		lambdaapp.NewFunc("sessions-history", lambdaapp.API, build, http.MethodGet+" "+sessions.PathHistory),
		lambdaapp.NewFunc("sessions-rename", lambdaapp.API, build, http.MethodPatch+" "+sessions.PathSession),
		lambdaapp.NewFunc("sessions-delete", lambdaapp.API, build, http.MethodDelete+" "+sessions.PathSession),
		lambdaapp.NewFunc("sessions-pin", lambdaapp.API, build, http.MethodPut+" "+sessions.PathPin),
		lambdaapp.NewFunc("sessions-unpin", lambdaapp.API, build, http.MethodDelete+" "+sessions.PathPin),
		lambdaapp.NewFunc("chat-abort", lambdaapp.API, build, http.MethodPost+" "+sessions.PathAbort),
	}
}

// Main runs the session function named name.
func Main(name string) { lambdaapp.Main(Funcs(), name) }

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return sessions.New(app.Store, nil, nil).Routes(), nil
}
