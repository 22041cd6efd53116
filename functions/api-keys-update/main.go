// Command api-keys-update serves PATCH
// /v3/access/users/{user_id}/api-keys/{key_id} (a key's limits), as an AWS
// Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/apikeysfn"
)

func main() { lambdaapp.Main(apikeysfn.APIKeysUpdate) }
