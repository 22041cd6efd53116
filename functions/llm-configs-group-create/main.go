// Command llm-configs-group-create serves POST
// /v3/access/groups/{group_id}/llm-model-configs (create a group LLM
// configuration; admin token), as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsGroupCreate) }
