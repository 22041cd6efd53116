// Command v1-root serves GET /v1 and GET /v1/ (gateway status), as an AWS
// Lambda function behind the HTTP API. It reads no secret and opens no store.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/catalogfn"
)

func main() { lambdaapp.Main(catalogfn.V1Root) }
