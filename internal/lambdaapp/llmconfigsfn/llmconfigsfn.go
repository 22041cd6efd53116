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
	"agentchat/internal/llmconfig"
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
	return []lambdaapp.Func{
		LLMConfigsList(), LLMConfigsOwn(), LLMConfigsDefaultGet(), LLMConfigsCreate(), LLMConfigsUpdate(), LLMConfigsDelete(), LLMConfigsSetDefault(),
		LLMConfigsGroupList(), LLMConfigsGroupDefaultGet(), LLMConfigsGroupCreate(), LLMConfigsGroupUpdate(), LLMConfigsGroupDelete(), LLMConfigsGroupSetDefault(),
	}
}

// LLMConfigsList is the function llm-configs-list.
func LLMConfigsList() lambdaapp.Func { return api(List, http.MethodGet, llmconfigs.PathUser) }

// LLMConfigsOwn is the function llm-configs-own.
func LLMConfigsOwn() lambdaapp.Func { return api(Own, http.MethodGet, llmconfigs.PathUserOwn) }

// LLMConfigsDefaultGet is the function llm-configs-default-get.
func LLMConfigsDefaultGet() lambdaapp.Func {
	return api(DefaultGet, http.MethodGet, llmconfigs.PathUserDefault)
}

// LLMConfigsCreate is the function llm-configs-create.
func LLMConfigsCreate() lambdaapp.Func { return api(Create, http.MethodPost, llmconfigs.PathUser) }

// LLMConfigsUpdate is the function llm-configs-update.
func LLMConfigsUpdate() lambdaapp.Func { return api(Update, http.MethodPut, llmconfigs.PathUserConfig) }

// LLMConfigsDelete is the function llm-configs-delete.
func LLMConfigsDelete() lambdaapp.Func {
	return api(Delete, http.MethodDelete, llmconfigs.PathUserConfig)
}

// LLMConfigsSetDefault is the function llm-configs-set-default.
func LLMConfigsSetDefault() lambdaapp.Func {
	return api(SetDefault, http.MethodPut, llmconfigs.PathUserSetDefault)
}

// LLMConfigsGroupList is the function llm-configs-group-list.
func LLMConfigsGroupList() lambdaapp.Func {
	return api(GroupList, http.MethodGet, llmconfigs.PathGroup)
}

// LLMConfigsGroupDefaultGet is the function llm-configs-group-default-get.
func LLMConfigsGroupDefaultGet() lambdaapp.Func {
	return api(GroupDefaultGet, http.MethodGet, llmconfigs.PathGroupDefault)
}

// LLMConfigsGroupCreate is the function llm-configs-group-create.
func LLMConfigsGroupCreate() lambdaapp.Func {
	return api(GroupCreate, http.MethodPost, llmconfigs.PathGroup)
}

// LLMConfigsGroupUpdate is the function llm-configs-group-update.
func LLMConfigsGroupUpdate() lambdaapp.Func {
	return api(GroupUpdate, http.MethodPut, llmconfigs.PathGroupConfig)
}

// LLMConfigsGroupDelete is the function llm-configs-group-delete.
func LLMConfigsGroupDelete() lambdaapp.Func {
	return api(GroupDelete, http.MethodDelete, llmconfigs.PathGroupConfig)
}

// LLMConfigsGroupSetDefault is the function llm-configs-group-set-default.
func LLMConfigsGroupSetDefault() lambdaapp.Func {
	return api(GroupSetDefault, http.MethodPut, llmconfigs.PathGroupSetDefault)
}

// api is an API function serving one route of the LLM configuration
// handlers.
func api(name, method, path string) lambdaapp.Func {
	return lambdaapp.NewFunc(name, lambdaapp.API, build, method+" "+path)
}

func build(_ context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	users := userpath.New(app.GNS3)
	return llmconfigs.New(app.Store, llmconfigs.Options{
		Secrets:    app.Secrets,
		Users:      users,
		Groups:     llmconfig.NewGroupSource(app.GNS3, users, 0),
		AdminToken: app.Config.AdminToken,
		Auth:       app.Auth,
		GNS3:       app.GNS3,
	}).Routes(), nil
}
