package gns3test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"agentchat/internal/gns3"
)

// TestLatency: with SetLatency every request is answered no sooner than
// the latency, and one whose client gives up first gets no answer but is
// counted.
func TestLatency(t *testing.T) {
	s := NewServer(t, nil)
	project := s.AddProject("lab", gns3.StatusOpened)
	get := func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/v3/projects/"+project+"/nodes", nil)
		if err != nil {
			t.Fatal(err)
		}
		return http.DefaultClient.Do(req)
	}

	const latency = 20 * time.Millisecond
	s.SetLatency(latency)
	start := time.Now()
	resp, err := get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || time.Since(start) < latency {
		t.Fatalf("status %d after %s, want 200 after %s at least", resp.StatusCode, time.Since(start), latency)
	}

	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if resp, err := get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("a client that gave up got %v", err)
	}
	if n := s.Hits("GET /v3/projects/" + project + "/nodes"); n != 2 {
		t.Fatalf("hits = %d, want 2", n)
	}
}
