// Command v1-chat-sync serves POST /v1/chat/sync, as an AWS Lambda function
// behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/gatewayfn"
)

func main() { lambdaapp.Main(gatewayfn.V1ChatSync) }
