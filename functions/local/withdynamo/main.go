// Command withdynamo is the local server of functions/local that also
// serves DynamoDB (STORE=dynamodb, TABLE_NAME, DYNAMODB_ENDPOINT for an
// emulator such as dynalite): the AWS SDK linked in, which the SQLite-only
// local server leaves out. The tests that run two server processes on one
// DynamoDB store build it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"agentchat/internal/localserver"
	"agentchat/internal/wire/dynamowire"
)

func main() {
	localserver.TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localserver.RunWith(ctx, os.Getenv, os.Stdout, os.Stderr, nil, dynamowire.Open); err != nil {
		fmt.Fprintln(os.Stderr, "agentchat:", err)
		os.Exit(1)
	}
}
