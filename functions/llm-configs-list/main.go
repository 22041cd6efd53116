// Command llm-configs-list serves GET /v3/access/users/{user_id}/llm-model-
// configs (the user's own and inherited LLM configurations), as an AWS Lambda
// function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsList) }
