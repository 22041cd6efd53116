// Command v1-agents serves GET /v1/agents, as an AWS Lambda function behind
// the HTTP API.
package main

import "agentchat/internal/lambdaapp/gatewayfn"

func main() { gatewayfn.Main("v1-agents") }
