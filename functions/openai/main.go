// Command openai serves the OpenAI-compatible API: GET /v1/models, GET
// /v1/models/{id} and POST /v1/chat/completions, as an AWS Lambda function
// behind a response-streaming function URL (one base URL for OpenAI clients).
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/gatewayfn"
)

func main() { lambdaapp.Main(gatewayfn.OpenAI) }
