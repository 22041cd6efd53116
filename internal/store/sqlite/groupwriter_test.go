package sqlite

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"agentchat/internal/store"
)

// TestGroupWriterGroups: writes that arrive while a transaction commits
// share the next one; each write returns its transaction's error, or its
// own; after close a write is refused.
func TestGroupWriterGroups(t *testing.T) {
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		batches []int
	)
	fail := errors.New("disk full")
	w := startGroupWriter(func(b []usageAdd, errs []error) error {
		mu.Lock()
		n := len(batches)
		batches = append(batches, len(b))
		mu.Unlock()
		if n == 0 {
			<-release // the first transaction is slow: the others queue
			return nil
		}
		return fail
	})
	k := store.UsageKey{UserID: "u", Day: "2026-12-04", Model: "m"}
	ctx := context.Background()
	firstDone := make(chan error, 1)
	go func() { firstDone <- w.add(ctx, usageAdd{k: k, d: store.Usage{LLMCalls: 1}}) }()
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
		wg.Go(func() { errs <- w.add(ctx, usageAdd{k: k, d: store.Usage{LLMCalls: 1}}) })
	}
	for len(w.queue) < queued { // all queued behind the slow transaction
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
	if err := w.add(ctx, usageAdd{k: k}); !errors.Is(err, errWriterClosed) {
		t.Fatalf("add after close: %v", err)
	}
}

// TestGroupWriterFailsAlone: a write its transaction fails alone gets its
// own error; the others of the transaction succeed.
func TestGroupWriterFailsAlone(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	alone := errors.New("this one")
	var sizes []int
	w := startGroupWriter(func(b []usageAdd, errs []error) error {
		sizes = append(sizes, len(b)) // only the writer's goroutine runs this
		if len(sizes) == 1 {
			started <- struct{}{}
			<-release
		}
		for i, a := range b {
			if a.d.LLMCalls == 99 {
				errs[i] = alone
			}
		}
		return nil
	})
	defer w.close()
	ctx := context.Background()
	k := store.UsageKey{UserID: "u", Day: "2026-12-04", Model: "m"}
	first := make(chan error, 1)
	go func() { first <- w.add(ctx, usageAdd{k: k}) }()
	<-started
	calls := []int64{1, 99, 2}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, n := range calls {
		wg.Go(func() { errs[i] = w.add(ctx, usageAdd{k: k, d: store.Usage{LLMCalls: n}}) })
	}
	for len(w.queue) < len(calls) {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || !errors.Is(errs[1], alone) || errs[2] != nil {
		t.Fatalf("errors %v, want [nil %v nil]", errs, alone)
	}
	if len(sizes) != 2 || sizes[1] != len(calls) {
		t.Fatalf("transactions of %v writes, want [1 %d]", sizes, len(calls))
	}
}
