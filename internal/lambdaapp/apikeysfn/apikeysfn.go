// Package apikeysfn holds the Lambda functions of the API-key routes
// (create, list, revoke one, revoke all), behind the HTTP API.
package apikeysfn

import (
	"context"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/lambdaapp"
)

// Funcs returns the API-key functions.
func Funcs() []lambdaapp.Func {
	return []lambdaapp.Func{
		lambdaapp.NewFunc("api-keys-create", lambdaapp.API, build, http.MethodPost+" "+apikeys.PathKeys),
		lambdaapp.NewFunc("api-keys-list", lambdaapp.API, build, http.MethodGet+" "+apikeys.PathKeys),
		lambdaapp.NewFunc("api-keys-delete", lambdaapp.API, build, http.MethodDelete+" "+apikeys.PathKey),
		lambdaapp.NewFunc("api-keys-delete-all", lambdaapp.API, build, http.MethodDelete+" "+apikeys.PathKeys),
	}
}

// Main runs the API-key function named name.
func Main(name string) { lambdaapp.Main(Funcs(), name) }

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return apikeys.New(app.Store, apikeys.Options{Users: userpath.New(app.GNS3)}).Routes(), nil
}
