package sqlite

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

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
	}, 0)
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
	}, 0)
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

// TestLingerPolicy: the first write of a transaction waits for others
// once writes come at least twice per linger, on average; not after a
// wait that gathered nobody, for lingerBackoff transactions, unless writes
// overlap a commit meanwhile.
func TestLingerPolicy(t *testing.T) {
	const linger = time.Millisecond
	type step struct {
		gaps   []time.Duration // writes arrived, after these gaps
		n      int             // then a transaction of n writes (0: none)
		waited bool
	}
	load := func(n int, gap time.Duration) step { return step{gaps: repeat(n, gap)} }
	tests := []struct {
		name  string
		steps []step
		want  time.Duration
	}{
		{"no write yet", nil, 0},
		{"one write", []step{load(1, 0)}, 0},
		{"writes 2 ms apart", []step{load(100, 2*time.Millisecond)}, 0},
		{"just over half the linger apart", []step{load(100, 510*time.Microsecond)}, 0},
		{"a load: 300 us apart", []step{load(100, 300*time.Microsecond)}, linger},
		{"a burst of 3 after a silence", []step{load(50, 300*time.Microsecond), load(1, time.Second), load(2, 10*time.Microsecond)}, 0},
		{"a load again after the silence", []step{load(50, 300*time.Microsecond), load(1, time.Second), load(40, 100*time.Microsecond)}, linger},
		{"a clock going back counts as no gap", []step{load(50, 300*time.Microsecond), load(1, -time.Second)}, linger},
		{"a wait that gathered nobody", []step{load(100, 300*time.Microsecond), {n: 1, waited: true}}, 0},
		{"backing off", append([]step{load(100, 300*time.Microsecond), {n: 1, waited: true}},
			slices.Repeat([]step{{n: 1}}, lingerBackoff-1)...), 0},
		{"backed off", append([]step{load(100, 300*time.Microsecond), {n: 1, waited: true}},
			slices.Repeat([]step{{n: 1}}, lingerBackoff)...), linger},
		{"writes overlapped a commit meanwhile", []step{load(100, 300*time.Microsecond), {n: 1, waited: true}, {n: 2}}, linger},
		{"a wait that gathered others", []step{load(100, 300*time.Microsecond), {n: 4, waited: true}}, linger},
	}
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := lingerPolicy{max: linger}
			at := t0
			for _, s := range tc.steps {
				for _, g := range s.gaps {
					at = at.Add(g)
					p.arrived(at)
				}
				if s.n > 0 {
					p.committed(s.n, s.waited)
				}
			}
			if got := p.wait(); got != tc.want {
				t.Fatalf("wait %v (average gap %v, %d to skip), want %v", got, p.gap, p.skip, tc.want)
			}
		})
	}
	unset := lingerPolicy{}
	unset.arrived(t0)
	unset.arrived(t0)
	if got := unset.wait(); got != 0 {
		t.Fatalf("no linger configured: wait %v", got)
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestGroupWriterLingers: once writes came quickly, the first write of a
// transaction waits for the writes that come within the
// linger (here an hour: the test's writes all come during it), and they
// commit together; closing the writer ends the wait and commits what it
// gathered.
func TestGroupWriterLingers(t *testing.T) {
	var (
		mu      sync.Mutex
		batches []int
	)
	committed := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), batches...)
	}
	release := make(chan struct{})
	w := startGroupWriter(func(b []usageAdd, _ []error) error {
		mu.Lock()
		first := len(batches) == 0
		batches = append(batches, len(b))
		mu.Unlock()
		if first {
			<-release // the others queue meanwhile
		}
		return nil
	}, time.Hour)
	// Writes are queued here as add queues them.
	push := func() chan error {
		p := pending[usageAdd]{at: time.Now(), done: make(chan error, 1)}
		w.queue <- p
		return p.done
	}
	wait := func(dones []chan error) {
		t.Helper()
		for _, done := range dones {
			if err := <-done; err != nil {
				t.Fatalf("write: %v", err)
			}
		}
	}
	// A load: 30 writes queue while the first commits, and share the
	// next transaction. Nothing waited so far: the first write came
	// alone, the others were queued already.
	const load = 30
	dones := []chan error{push()}
	for len(committed()) == 0 {
		runtime.Gosched()
	}
	for range load {
		dones = append(dones, push())
	}
	close(release)
	wait(dones)
	if got := committed(); !slices.Equal(got, []int{1, load}) {
		t.Fatalf("transactions of %v writes, want [1 %d]", got, load)
	}
	// Five writes, each queued once the writer took the one before: a
	// writer that did not wait would commit them apart.
	const n = 5
	var lingering []chan error
	for range n {
		lingering = append(lingering, push())
		for len(w.queue) > 0 {
			runtime.Gosched()
		}
	}
	if got := committed(); len(got) != 2 {
		t.Fatalf("transactions %v: the writer did not wait for company", got)
	}
	w.close()
	wait(lingering)
	if got := committed(); !slices.Equal(got, []int{1, load, n}) {
		t.Fatalf("transactions of %v writes, want [1 %d %d]", got, load, n)
	}
}
