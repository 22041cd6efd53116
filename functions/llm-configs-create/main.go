// Command llm-configs-create serves POST /v3/access/users/{user_id}/llm-model-
// configs (create an LLM configuration), as an AWS Lambda function behind the
// HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsCreate) }
