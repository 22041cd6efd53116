// Package apikeysfn holds the Lambda functions of the API-key routes
// (create, list, revoke one, revoke all, change a key's limits), behind
// the HTTP API.
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
	return []lambdaapp.Func{APIKeysCreate(), APIKeysList(), APIKeysDelete(), APIKeysDeleteAll(), APIKeysUpdate()}
}

// APIKeysCreate is the function api-keys-create.
func APIKeysCreate() lambdaapp.Func { return api("api-keys-create", http.MethodPost, apikeys.PathKeys) }

// APIKeysList is the function api-keys-list.
func APIKeysList() lambdaapp.Func { return api("api-keys-list", http.MethodGet, apikeys.PathKeys) }

// APIKeysDelete is the function api-keys-delete.
func APIKeysDelete() lambdaapp.Func {
	return api("api-keys-delete", http.MethodDelete, apikeys.PathKey)
}

// APIKeysDeleteAll is the function api-keys-delete-all.
func APIKeysDeleteAll() lambdaapp.Func {
	return api("api-keys-delete-all", http.MethodDelete, apikeys.PathKeys)
}

// APIKeysUpdate is the function api-keys-update (a key's limits).
func APIKeysUpdate() lambdaapp.Func {
	return api("api-keys-update", http.MethodPatch, apikeys.PathKey)
}

// api is an API function serving one route of the API-key handlers.
func api(name, method, path string) lambdaapp.Func {
	return lambdaapp.NewFunc(name, lambdaapp.API, build, method+" "+path)
}

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return apikeys.New(app.Store, apikeys.Options{Users: userpath.New(app.GNS3)}).Routes(), nil
}
