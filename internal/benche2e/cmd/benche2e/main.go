// Command benche2e is the end-to-end benchmark of agentchat (make
// bench-e2e): see package benche2e.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"agentchat/internal/benche2e"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := benche2e.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
