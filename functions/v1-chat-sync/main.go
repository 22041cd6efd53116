// Command v1-chat-sync serves POST /v1/chat/sync, as an AWS Lambda function
// behind the HTTP API.
package main

import "agentchat/internal/lambdaapp/gatewayfn"

func main() { gatewayfn.Main("v1-chat-sync") }
