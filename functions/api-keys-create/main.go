// Command api-keys-create serves POST /v3/access/users/{user_id}/api-keys, as
// an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/apikeysfn"
)

func main() { lambdaapp.Main(apikeysfn.APIKeysCreate) }
