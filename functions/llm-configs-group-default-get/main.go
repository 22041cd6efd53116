// Command llm-configs-group-default-get serves GET
// /v3/access/groups/{group_id}/llm-model-configs/default (a group's default
// LLM configuration; admin token), as an AWS Lambda function behind the HTTP
// API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsGroupDefaultGet) }
