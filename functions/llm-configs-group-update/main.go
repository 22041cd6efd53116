// Command llm-configs-group-update serves PUT
// /v3/access/groups/{group_id}/llm-model-configs/{config_id} (update a group
// LLM configuration; admin token), as an AWS Lambda function behind the HTTP
// API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsGroupUpdate) }
