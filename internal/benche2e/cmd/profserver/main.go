// Command profserver is the local server of functions/local that writes a
// CPU profile of its whole run to $BENCH_E2E_CPUPROFILE, and the profile of
// its allocations beside it (the same path with ".allocs" appended), for
// make bench-e2e with BENCH_E2E_PROFILE set; never a production binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"agentchat/internal/benche2e"
	"agentchat/internal/localserver"
	"agentchat/internal/wire/dynamowire"
)

func main() {
	localserver.TuneGC(os.Getenv)
	stopProfile := func() {}
	if path := os.Getenv(benche2e.EnvCPUProfile); path != "" {
		stopCPU, err := benche2e.StartCPUProfile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profserver:", err)
			os.Exit(1)
		}
		stopProfile = stopCPU
		defer func() {
			stopCPU()
			writeAllocs(path + ".allocs")
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Both stores: the profile of a -store dynalite run too.
	if err := localserver.RunWith(ctx, os.Getenv, os.Stdout, os.Stderr, nil, dynamowire.Open); err != nil {
		fmt.Fprintln(os.Stderr, "agentchat:", err)
		stop()
		stopProfile()
		os.Exit(1)
	}
}

// writeAllocs writes the allocation profile of the run to path.
func writeAllocs(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profserver:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "profserver:", err)
	}
}
