// Command api-keys-delete serves DELETE /v3/access/users/{user_id}/api-
// keys/{key_id}, as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/apikeysfn"
)

func main() { lambdaapp.Main(apikeysfn.APIKeysDelete) }
