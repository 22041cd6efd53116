// Command v1-chat serves POST /v1/chat (token SSE), as an AWS Lambda function
// behind a response-streaming function URL.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/gatewayfn"
)

func main() { lambdaapp.Main(gatewayfn.V1Chat) }
