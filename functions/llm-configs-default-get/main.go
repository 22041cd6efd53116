// Command llm-configs-default-get serves GET /v3/access/users/{user_id}/llm-
// model-configs/default (the user's effective default LLM configuration), as
// an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsDefaultGet) }
