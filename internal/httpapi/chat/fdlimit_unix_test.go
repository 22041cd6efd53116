//go:build unix

package chat_test

import (
	"fmt"
	"syscall"
)

// ensureFDs makes sure the process may open at least n file descriptors,
// raising the soft RLIMIT_NOFILE up to the hard limit when needed.
func ensureFDs(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur >= n {
		return nil
	}
	if lim.Max < n {
		return fmt.Errorf("RLIMIT_NOFILE hard limit %d is below the %d file descriptors needed (raise it with ulimit -Hn)", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE to %d: %w", n, err)
	}
	return nil
}
