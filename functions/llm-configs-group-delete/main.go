// Command llm-configs-group-delete serves DELETE
// /v3/access/groups/{group_id}/llm-model-configs/{config_id} (delete a group
// LLM configuration; admin token), as an AWS Lambda function behind the HTTP
// API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsGroupDelete) }
