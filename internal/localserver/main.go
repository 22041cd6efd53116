package localserver

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"agentchat/internal/wire"
)

// Main is the whole of a local server command: it tunes the garbage
// collector, serves (RunWith, with dynamo for STORE=dynamodb; nil for a
// command that links SQLite only) until SIGINT or SIGTERM, and exits with
// status 1 and the error on stderr when serving fails.
func Main(dynamo wire.StoreOpener) {
	TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := RunWith(ctx, os.Getenv, os.Stdout, os.Stderr, nil, dynamo); err != nil {
		fmt.Fprintln(os.Stderr, "agentchat:", err)
		stop()
		os.Exit(1)
	}
}
