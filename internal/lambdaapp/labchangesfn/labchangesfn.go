// Package labchangesfn holds the Lambda functions of the lab-change routes
// of the project chat, both behind the HTTP API: chat-undo (POST
// .../sessions/{session_id}/undo, which restores the GNS3 snapshot taken
// before the session's last changes) and chat-audit (GET .../audit, the
// audit trail). They link the store, the router and the GNS3 client, and
// no LLM client.
package labchangesfn

import (
	"context"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/labchanges"
	"agentchat/internal/httpapi/skillsreload"
	"agentchat/internal/lambdaapp"
)

// Function names (folders under functions/).
const (
	UndoFunction  = "chat-undo"
	AuditFunction = "chat-audit"
)

// Funcs returns the functions chat-undo and chat-audit.
func Funcs() []lambdaapp.Func { return []lambdaapp.Func{ChatUndo(), ChatAudit()} }

// ChatUndo is the function chat-undo.
func ChatUndo() lambdaapp.Func {
	return lambdaapp.NewFunc(UndoFunction, lambdaapp.API, build, http.MethodPost+" "+labchanges.PathUndo)
}

// ChatAudit is the function chat-audit.
func ChatAudit() lambdaapp.Func {
	return lambdaapp.NewFunc(AuditFunction, lambdaapp.API, build, http.MethodGet+" "+labchanges.PathAudit)
}

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return labchanges.New(options(app)).Routes(), nil
}

// options are the handlers' options from the app's dependencies.
func options(app *lambdaapp.App) labchanges.Options {
	o := labchanges.Options{Store: app.Store, Snapshots: app.Config.Snapshots, AdminToken: app.Config.AdminToken,
		Auth: app.Auth, Projects: app.Projects, Logger: app.Logger}
	if app.GNS3 != nil {
		o.GNS3 = app.GNS3
		o.Superadmins = skillsreload.GNS3Superadmins{Client: app.GNS3}
	}
	return o
}
