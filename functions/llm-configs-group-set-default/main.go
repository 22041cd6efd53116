// Command llm-configs-group-set-default serves PUT
// /v3/access/groups/{group_id}/llm-model-configs/default/{config_id} (make a
// group LLM configuration the group's default; admin token), as an AWS Lambda
// function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsGroupSetDefault) }
