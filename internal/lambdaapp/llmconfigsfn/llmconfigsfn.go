// Package llmconfigsfn holds the Lambda functions of the LLM model
// configuration routes (one per endpoint, users' and groups'), behind the
// HTTP API. The functions that store an API key (create, update) read
// ENCRYPTION_KEY from SSM; without it they answer 503 to a request with a
// key and serve the others. The group functions read ADMIN_TOKEN.
package llmconfigsfn

import (
	"context"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/llmconfigs"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/lambdaapp"
)

// Function names (folders under functions/).
const (
	List       = "llm-configs-list"
	Own        = "llm-configs-own"
	DefaultGet = "llm-configs-default-get"
	Create     = "llm-configs-create"
	Update     = "llm-configs-update"
	Delete     = "llm-configs-delete"
	SetDefault = "llm-configs-set-default"

	GroupList       = "llm-configs-group-list"
	GroupDefaultGet = "llm-configs-group-default-get"
	GroupCreate     = "llm-configs-group-create"
	GroupUpdate     = "llm-configs-group-update"
	GroupDelete     = "llm-configs-group-delete"
	GroupSetDefault = "llm-configs-group-set-default"
)

// Funcs returns the LLM configuration functions.
func Funcs() []lambdaapp.Func {
	f := func(name, method, path string) lambdaapp.Func {
		return lambdaapp.NewFunc(name, lambdaapp.API, build, method+" "+path)
	}
	return []lambdaapp.Func{
		f(List, http.MethodGet, llmconfigs.PathUser),
		f(Own, http.MethodGet, llmconfigs.PathUserOwn),
		f(DefaultGet, http.MethodGet, llmconfigs.PathUserDefault),
		f(Create, http.MethodPost, llmconfigs.PathUser),
		f(Update, http.MethodPut, llmconfigs.PathUserConfig),
		f(Delete, http.MethodDelete, llmconfigs.PathUserConfig),
		f(SetDefault, http.MethodPut, llmconfigs.PathUserSetDefault),

		f(GroupList, http.MethodGet, llmconfigs.PathGroup),
		f(GroupDefaultGet, http.MethodGet, llmconfigs.PathGroupDefault),
		f(GroupCreate, http.MethodPost, llmconfigs.PathGroup),
		f(GroupUpdate, http.MethodPut, llmconfigs.PathGroupConfig),
		f(GroupDelete, http.MethodDelete, llmconfigs.PathGroupConfig),
		f(GroupSetDefault, http.MethodPut, llmconfigs.PathGroupSetDefault),
	}
}

// Main runs the LLM configuration function named name.
func Main(name string) { lambdaapp.Main(Funcs(), name) }

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	users := userpath.New(app.GNS3)
	return llmconfigs.New(app.Store, llmconfigs.Options{
		Secrets:    app.Secrets,
		Users:      users,
		Groups:     llmconfigs.NewGroupSource(app.GNS3, users, 0),
		AdminToken: app.Config.AdminToken,
		Auth:       app.Auth,
		GNS3:       app.GNS3,
	}).Routes(), nil
}
