// Command llm-configs-update serves PUT /v3/access/users/{user_id}/llm-model-
// configs/{config_id} (update an LLM configuration), as an AWS Lambda function
// behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsUpdate) }
