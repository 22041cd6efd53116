package agent

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Prefetch runs fetch(ctx) on its own goroutine, for an agent's Begin to
// start a read that its Preparer waits for, and returns that wait: the
// value, or an error when fetch panicked (the panic is not lost: it is in
// the error, with the stack) or when the waiter's context ended first.
// The wait may be called once.
func Prefetch[T any](ctx context.Context, fetch func(context.Context) T) func(context.Context) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if v := recover(); v != nil {
				r.err = fmt.Errorf("prefetch panicked: %v\n%s", v, debug.Stack())
			}
			done <- r
		}()
		r.v = fetch(ctx)
	}()
	return func(wctx context.Context) (T, error) {
		select {
		case r := <-done:
			return r.v, r.err
		case <-wctx.Done():
			var zero T
			return zero, fmt.Errorf("wait for prefetch: %w", context.Cause(wctx))
		}
	}
}
