// Command v1-root serves GET /v1/ (gateway status), as an AWS Lambda function
// behind the HTTP API.
package main

import "agentchat/internal/lambdaapp/gatewayfn"

func main() { gatewayfn.Main("v1-root") }
