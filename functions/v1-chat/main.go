// Command v1-chat serves POST /v1/chat (token SSE), as an AWS Lambda function
// behind a response-streaming function URL.
package main

import "agentchat/internal/lambdaapp/gatewayfn"

func main() { gatewayfn.Main("v1-chat") }
