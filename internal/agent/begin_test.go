package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

// gatedResolver resolves like its swapResolver once gate is closed. It is
// how a test sees that something ran while a turn was starting: StartTurn
// waits for the LLM's resolution before it returns. It gives up after a
// while, so that a wrong order fails the test rather than hanging it.
type gatedResolver struct {
	*swapResolver
	gate <-chan struct{}
}

func (g gatedResolver) Resolve(ctx context.Context, userID string) (llm.Resolved, error) {
	select {
	case <-g.gate:
		return g.swapResolver.Resolve(ctx, userID)
	case <-time.After(5 * time.Second):
		return llm.Resolved{}, errors.New("the agent's reads had not started while the turn was starting")
	}
}

// beginRecorder is an agent with Begin that records each call: the
// TurnInfo, the context, the mode given to its Preparer.
type beginRecorder struct {
	mu     sync.Mutex
	infos  []TurnInfo
	ctxs   []context.Context
	modes  []string
	reads  chan struct{} // closed when the first read started
	once   sync.Once
	answer string
}

func (b *beginRecorder) agent(id string) *Agent {
	return &Agent{ID: id, SystemPrompt: "Base.", Modes: []string{"teach", "lab"},
		Begin: func(ctx context.Context, t TurnInfo) Preparer {
			b.mu.Lock()
			b.infos, b.ctxs = append(b.infos, t), append(b.ctxs, ctx)
			b.mu.Unlock()
			read := Prefetch(ctx, func(context.Context) string {
				b.once.Do(func() { close(b.reads) })
				return b.answer
			})
			return func(ctx context.Context, mode string) (Preparation, error) {
				b.mu.Lock()
				b.modes = append(b.modes, mode)
				b.mu.Unlock()
				got, err := read(ctx)
				if err != nil {
					return Preparation{}, err
				}
				return Preparation{Prompt: "Mode " + mode + ". " + got}, nil
			}
		}}
}

func (b *beginRecorder) ctx(i int) context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctxs[i]
}

// TestBeginReadsBesideTheOpening: an agent's Begin is called as the turn
// starts, before the turn's session is opened and its LLM resolved (the
// resolver here waits for the agent's read to have started), with the
// project and the user but no mode; its Preparer gets the turn's mode and
// what was read; what Begin started ends with the turn.
func TestBeginReadsBesideTheOpening(t *testing.T) {
	rec := &beginRecorder{reads: make(chan struct{}), answer: "Topology: R1, R2."}
	h := newHarness(t, nil, func(o *Options) {
		o.LLM = gatedResolver{swapResolver: o.LLM.(*swapResolver), gate: rec.reads}
	})
	h.rt.o.Agents.Register(rec.agent("reader"))
	h.llm.Enqueue(llmtest.Reply{Text: "Hello."}, llmtest.Reply{Text: "Again."})
	ctx := context.Background()
	k := newKey()
	for i, mode := range []string{"lab", ""} {
		ev := waitFor(t, h.startRun(ctx, TurnRequest{Key: k, AgentID: "reader", Message: "hi", Mode: mode}, nil), "the turn")
		checkEnd(t, ev, false)
		reqs := agentCalls(h)
		want := "Mode lab. Topology: R1, R2." // the session keeps its mode
		if sys := reqs[len(reqs)-1].Messages[0].Content; !strings.Contains(sys, want) {
			t.Fatalf("turn %d: system prompt %q lacks %q", i, sys, want)
		}
		if err := rec.ctx(i).Err(); err == nil {
			t.Fatalf("turn %d: what Begin started outlives the turn", i)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, info := range rec.infos {
		if info != (TurnInfo{ProjectID: k.ProjectID, UserID: k.UserID}) {
			t.Fatalf("Begin got %+v", info)
		}
	}
	if strings.Join(rec.modes, ",") != "lab,lab" {
		t.Fatalf("the Preparers got the modes %q", rec.modes)
	}
}

// TestBeginEndsWithARefusedOrReleasedTurn: what Begin started for a turn
// that is refused (the session's lease held) ends when StartTurn returns;
// for a turn released without running, when it is released.
func TestBeginEndsWithARefusedOrReleasedTurn(t *testing.T) {
	h := newHarness(t, nil)
	rec := &beginRecorder{reads: make(chan struct{}), answer: "Topology."}
	h.rt.o.Agents.Register(rec.agent("reader"))
	ctx := context.Background()
	k := newKey()
	first, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "reader", Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "reader", Message: "two"})
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second turn: %v", err)
	}
	if rec.ctx(1).Err() == nil {
		t.Fatal("the refused turn's reads go on")
	}
	if rec.ctx(0).Err() != nil {
		t.Fatal("the started turn's reads ended before it did")
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if rec.ctx(0).Err() == nil {
		t.Fatal("the released turn's reads go on")
	}
}

// TestBeginFailures: a Begin that panics or gives no Preparer, a read that
// panics and a Preparer that fails all end the turn with the fixed
// sentence, the user's message kept and the detail logged.
func TestBeginFailures(t *testing.T) {
	cases := []struct {
		name   string
		begin  func(ctx context.Context, t TurnInfo) Preparer
		logged string
	}{
		{"Begin panics", func(context.Context, TurnInfo) Preparer { panic("begin exploded") }, "begin exploded"},
		{"no Preparer", func(context.Context, TurnInfo) Preparer { return nil }, "begin gave no preparer"},
		{"the read panics", func(ctx context.Context, _ TurnInfo) Preparer {
			read := Prefetch(ctx, func(context.Context) string { panic("read exploded") })
			return func(ctx context.Context, _ string) (Preparation, error) {
				_, err := read(ctx)
				return Preparation{}, err
			}
		}, "read exploded"},
		{"the Preparer fails", func(context.Context, TurnInfo) Preparer {
			return func(context.Context, string) (Preparation, error) {
				return Preparation{}, errors.New("controller refused")
			}
		}, "controller refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := newLogRecorder()
			h := newHarness(t, nil, withLogs(logs))
			h.rt.o.Agents.Register(&Agent{ID: "failing", Begin: tc.begin})
			k := newKey()
			ev := waitFor(t, h.startRun(context.Background(), TurnRequest{Key: k, AgentID: "failing", Message: "hi"}, nil), "the turn")
			if msg := checkEnd(t, ev, true); msg != "Could not prepare the agent for this turn." {
				t.Fatalf("error = %q", msg)
			}
			if msgs := h.messages(k); len(msgs) != 1 || msgs[0].Content != "hi" {
				t.Fatalf("stored = %+v", msgs)
			}
			logged := false
			for _, r := range logs.records() {
				logged = logged || strings.Contains(r.text, tc.logged)
			}
			if !logged {
				t.Fatalf("%q was not logged: %+v", tc.logged, logs.records())
			}
		})
	}
}

// TestPrefetchWaitEndsWithItsContext: the wait for a read gives up when
// the waiter's context ends, with its cause.
func TestPrefetchWaitEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	read := Prefetch(context.Background(), func(context.Context) int { <-release; return 1 })
	ctx, cancel := context.WithCancelCause(context.Background())
	stopped := errors.New("turn stopped")
	cancel(stopped)
	if _, err := read(ctx); !errors.Is(err, stopped) {
		t.Fatalf("wait = %v", err)
	}
}
