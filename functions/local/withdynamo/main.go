// Command withdynamo is the local server of functions/local that also
// serves DynamoDB (STORE=dynamodb, TABLE_NAME, DYNAMODB_ENDPOINT for an
// emulator such as dynalite): the AWS SDK linked in, which the SQLite-only
// local server leaves out (`make run-dynamodb`). The tests that run two
// server processes on one DynamoDB store build it.
package main

import (
	"agentchat/internal/localserver"
	"agentchat/internal/wire/dynamowire"
)

func main() { localserver.Main(dynamowire.Open) }
