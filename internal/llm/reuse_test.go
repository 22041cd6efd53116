package llm_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
)

// TestStreamsReuseConnections runs concurrent streams twice: the second
// round must not dial again. The scripted server flushes data: [DONE]
// before it ends the chunked body, so a client that closes the body right
// after [DONE] loses the connection each time.
func TestStreamsReuseConnections(t *testing.T) {
	const streams = 20
	fake := llmtest.NewServer(t)
	fake.SetDefault(llmtest.Reply{Text: "one two three", ChunkDelay: 5 * time.Millisecond})
	hc := llm.NewHTTPClient()
	var dials atomic.Int64
	tr := hc.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := llm.NewClient(llm.Config{APIKey: testKey, BaseURL: fake.BaseURL(), Model: "m"}, llm.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	round := func() {
		var wg sync.WaitGroup
		for range streams {
			wg.Go(func() {
				if _, err := c.Stream(context.Background(), userMsg("hi"), nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	round()
	first := dials.Load()
	if first > streams {
		t.Fatalf("%d dials for %d streams", first, streams)
	}
	round()
	if again := dials.Load() - first; again != 0 {
		t.Errorf("the second round of %d streams dialed %d times, want 0 (idle connections reused)", streams, again)
	}
}
