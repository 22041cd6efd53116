package sqlite

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"agentchat/internal/store"
)

// TestLedgerWriterGroups: adds that arrive while a transaction commits
// share the next one; each add returns its transaction's error; after
// close an add is refused.
func TestLedgerWriterGroups(t *testing.T) {
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		batches []int
	)
	fail := errors.New("disk full")
	w := startLedgerWriter(func(b []usageAdd) error {
		mu.Lock()
		first := len(batches) == 0
		batches = append(batches, len(b))
		mu.Unlock()
		if first {
			<-release // the first transaction is slow: the others queue
			return nil
		}
		return fail
	})
	k := store.UsageKey{UserID: "u", Day: "2026-12-04", Model: "m"}
	ctx := context.Background()
	firstDone := make(chan error, 1)
	go func() { firstDone <- w.add(ctx, k, store.Usage{LLMCalls: 1}) }()
	for { // wait until the first transaction runs
		mu.Lock()
		n := len(batches)
		mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	const queued = 20
	errs := make(chan error, queued)
	var wg sync.WaitGroup
	for range queued {
		wg.Go(func() { errs <- w.add(ctx, k, store.Usage{LLMCalls: 1}) })
	}
	for len(w.adds) < queued { // all queued behind the slow transaction
		runtime.Gosched()
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatalf("first add: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, fail) {
			t.Fatalf("queued add: %v, want its transaction's error", err)
		}
	}
	mu.Lock()
	got := append([]int(nil), batches...)
	mu.Unlock()
	if len(got) != 2 || got[0] != 1 || got[1] != queued {
		t.Fatalf("transactions of %v adds, want [1 %d]", got, queued)
	}
	w.close()
	if err := w.add(ctx, k, store.Usage{}); !errors.Is(err, errLedgerClosed) {
		t.Fatalf("add after close: %v", err)
	}
}
