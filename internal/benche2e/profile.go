package benche2e

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts writing the process's CPU profile to path; stop
// ends it and closes the file (call it once, on every way out).
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
