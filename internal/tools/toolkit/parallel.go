package toolkit

import "sync"

// ForEach runs f for every index in [0, n) concurrently and waits for
// all; f bounds its own requests (a semaphore of the call).
func ForEach(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}
