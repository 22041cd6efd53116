// Command local serves every agentchat route in one process over an
// embedded SQLite file: `make run`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"agentchat/internal/localserver"
)

func main() {
	localserver.TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localserver.Run(ctx, os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "agentchat:", err)
		os.Exit(1)
	}
}
