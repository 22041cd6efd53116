// Command llm-configs-set-default serves PUT /v3/access/users/{user_id}/llm-
// model-configs/default/{config_id} (make an LLM configuration the user's
// default), as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

func main() { lambdaapp.Main(llmconfigsfn.LLMConfigsSetDefault) }
