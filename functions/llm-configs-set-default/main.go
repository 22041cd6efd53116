// Command llm-configs-set-default serves PUT /v3/access/users/{user_id}/llm-
// model-configs/default/{config_id} (make an LLM configuration the user's
// default), as an AWS Lambda function behind the HTTP API.
package main

import "agentchat/internal/lambdaapp/llmconfigsfn"

func main() { llmconfigsfn.Main("llm-configs-set-default") }
