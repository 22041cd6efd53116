// Command v1-agents serves GET /v1/agents (the agent list, from a static
// catalogue), as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/catalogfn"
)

func main() { lambdaapp.Main(catalogfn.V1Agents) }
