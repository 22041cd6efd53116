package apitest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
)

// LLMGate makes a scripted LLM hold every request that carries a message
// "hold <n>" until Release(n), then answer it; any other request is
// answered at once. It lets a test keep turns running for as long as it
// needs, without timing: a held turn holds its session lease and its turn
// slot until released.
type LLMGate struct {
	mu    sync.Mutex
	gates map[int]chan struct{}
	// seen: the first request of the gate came (title calls come again).
	seen    map[int]bool
	arrived chan int
}

// NewLLMGate installs the gate as srv's handler (srv's queue must be
// empty). Every gate is released when the test ends, before srv closes.
func NewLLMGate(t testing.TB, srv *llmtest.Server) *LLMGate {
	t.Helper()
	g := &LLMGate{gates: map[int]chan struct{}{}, seen: map[int]bool{}, arrived: make(chan int, 1024)}
	srv.SetHandler(func(req llmtest.Request) llmtest.Reply {
		var n int
		for _, m := range req.Messages {
			if _, err := fmt.Sscanf(m.Content, "hold %d", &n); err == nil {
				c, first := g.gate(n)
				if first {
					g.arrived <- n
				}
				<-c
				return llmtest.Reply{Text: "done holding"}
			}
		}
		return llmtest.Reply{Text: "quick answer"}
	})
	// Registered after srv's cleanup, so it runs before it (srv's close
	// waits for its requests).
	t.Cleanup(g.ReleaseAll)
	return g
}

// gate returns the gate of n and whether this is its first request.
func (g *LLMGate) gate(n int) (c chan struct{}, first bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c = g.gateLocked(n)
	first = !g.seen[n]
	g.seen[n] = true
	return c, first
}

// gateLocked returns the gate of n, made on first use; g.mu is held.
func (g *LLMGate) gateLocked(n int) chan struct{} {
	c, ok := g.gates[n]
	if !ok {
		c = make(chan struct{})
		g.gates[n] = c
	}
	return c
}

// Release lets the held request n (and any later one) answer.
func (g *LLMGate) Release(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.gateLocked(n)
	select {
	case <-c:
	default:
		close(c)
	}
}

// ReleaseAll releases every gate.
func (g *LLMGate) ReleaseAll() {
	g.mu.Lock()
	ns := make([]int, 0, len(g.gates))
	for n := range g.gates {
		ns = append(ns, n)
	}
	g.mu.Unlock()
	for _, n := range ns {
		g.Release(n)
	}
}

// WaitHeld waits until count more held requests reached the LLM (each
// counted once), failing after a generous deadline.
func (g *LLMGate) WaitHeld(t testing.TB, count int) {
	t.Helper()
	for range count {
		select {
		case <-g.arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("a held request never reached the LLM")
		}
	}
}
