package turnlog

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// countingReads counts the reads of a follower's store.
type countingReads struct {
	store.Store
	reads atomic.Int64
}

func (c *countingReads) ReadTurnEvents(ctx context.Context, k store.Key, turn string, after int64) (*store.TurnEvents, error) {
	c.reads.Add(1)
	return c.Store.ReadTurnEvents(ctx, k, turn, after)
}

// BenchmarkFollowAcrossInstances measures what a client rejoining on
// another instance sees: a turn writes one event every 10 ms through a
// Recorder on one store handle, and a Follower on another handle of the
// same SQLite file (another instance: no Hub in common, it polls) receives
// them. It reports the follow latency (event added → event received), p50
// and p99, and the follower's reads per second.
func BenchmarkFollowAcrossInstances(b *testing.B) {
	path := filepath.Join(b.TempDir(), "chat.db")
	open := func() store.Store {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	writer := open()
	reader := &countingReads{Store: open()}
	k := store.Key{ProjectID: uuid.NewString(), UserID: "alice", ThreadID: uuid.NewString()}
	if err := writer.CreateSession(context.Background(), &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		b.Fatal(err)
	}
	const events, gap = 100, 10 * time.Millisecond
	var latencies []time.Duration
	var readRate float64
	b.ResetTimer()
	for range b.N {
		turn := uuid.Must(uuid.NewV7()).String()
		if err := writer.AcquireLease(context.Background(), k, turn, time.Minute); err != nil {
			b.Fatal(err)
		}
		rec := Start(context.Background(), writer, k, turn, Options{})
		var mu sync.Mutex
		sent := make([]time.Time, events+1)
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 1; i <= events; i++ {
				mu.Lock()
				sent[i] = time.Now()
				mu.Unlock()
				rec.Add(int64(i), payload(i))
				time.Sleep(gap)
			}
			if err := writer.ReleaseLease(context.Background(), k, turn); err != nil {
				b.Error(err)
			}
			rec.Close()
		})
		// The follower joins at once: it waits for the turn by its lease.
		reads0, start := reader.reads.Load(), time.Now()
		var page *store.TurnEvents
		for page == nil || page.Turn != turn {
			var err error
			if page, err = reader.ReadTurnEvents(context.Background(), k, "", 0); err != nil {
				b.Fatal(err)
			}
		}
		f := &Follower{Logs: reader}
		out, err := f.Follow(context.Background(), k, page, func(seq int64, _ []byte) error {
			mu.Lock()
			latencies = append(latencies, time.Since(sent[seq]))
			mu.Unlock()
			return nil
		})
		if err != nil || out != Finished {
			b.Fatalf("follow: %v, %v", out, err)
		}
		readRate += float64(reader.reads.Load()-reads0) / time.Since(start).Seconds()
		wg.Wait()
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(readRate/float64(b.N), "reads/s")
}
