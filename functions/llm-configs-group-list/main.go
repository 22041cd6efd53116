// Command llm-configs-group-list serves GET /v3/access/groups/{group_id}/llm-
// model-configs (a group's LLM configurations; admin token), as an AWS Lambda
// function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsGroupList) }
