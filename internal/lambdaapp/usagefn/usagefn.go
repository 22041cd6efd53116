// Package usagefn holds the Lambda functions of a user's usage ledger (GET
// /v3/access/users/{user_id}/usage) and budget (GET and PUT
// /v3/access/users/{user_id}/budget), behind the HTTP API. The calling API
// key's own usage (GET /v1/usage) is served by the openai function, on the
// base URL of OpenAI clients (package gatewayfn).
package usagefn

import (
	"context"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/usageapi"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/lambdaapp"
)

// Funcs returns the usage functions.
func Funcs() []lambdaapp.Func { return []lambdaapp.Func{UsageGet(), BudgetGet(), BudgetSet()} }

// UsageGet is the function usage-get.
func UsageGet() lambdaapp.Func {
	return lambdaapp.NewFunc("usage-get", lambdaapp.API, build, http.MethodGet+" "+usageapi.PathUsage)
}

// BudgetGet is the function budget-get.
func BudgetGet() lambdaapp.Func {
	return lambdaapp.NewFunc("budget-get", lambdaapp.API, build, http.MethodGet+" "+usageapi.PathBudget)
}

// BudgetSet is the function budget-set (the admin token only).
func BudgetSet() lambdaapp.Func {
	return lambdaapp.NewFunc("budget-set", lambdaapp.API, build, http.MethodPut+" "+usageapi.PathBudget)
}

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	return usageapi.New(app.Store, usageapi.Options{Users: userpath.New(app.GNS3), AdminToken: app.Config.AdminToken, Auth: app.Auth}).Routes(), nil
}
