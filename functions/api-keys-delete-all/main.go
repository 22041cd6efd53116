// Command api-keys-delete-all serves DELETE /v3/access/users/{user_id}/api-
// keys (revoke every key), as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/apikeysfn"
)

func main() { lambdaapp.Main(apikeysfn.APIKeysDeleteAll) }
