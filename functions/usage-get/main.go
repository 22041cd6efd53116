// Command usage-get serves GET /v3/access/users/{user_id}/usage, as an AWS
// Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/usagefn"
)

func main() { lambdaapp.Main(usagefn.UsageGet) }
