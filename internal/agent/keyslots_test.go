package agent

import (
	"context"
	"sync"
	"testing"

	"agentchat/internal/llm/llmtest"
)

// holdRun starts run (a turn or a stateless run) whose LLM call hangs
// after its first chunk, and returns once it emitted an event: it then
// holds its turn slot until stop.
func (h *harness) holdRun(t *testing.T, run func(ctx context.Context, emit func(Event)) error) *holder {
	t.Helper()
	h.llm.Enqueue(llmtest.Reply{Text: "thinking about it", Hang: true, HangAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	ho := &holder{cancel: cancel, done: make(chan struct{})}
	started := make(chan struct{})
	var once sync.Once
	emit := func(Event) { once.Do(func() { close(started) }) }
	errc := make(chan error, 1)
	go func() {
		defer close(ho.done)
		errc <- run(ctx, emit)
	}()
	select {
	case <-started:
	case err := <-errc:
		if err != nil {
			cancel()
			t.Fatalf("holding run: %v", err)
		}
		<-started
	}
	t.Cleanup(ho.stop)
	return ho
}

// keyStateless is a stateless run of user in the slots of an API key
// with max_parallel n.
func (h *harness) keyStateless(ctx context.Context, user, keyID string, n int, emit func(Event)) error {
	_, err := h.rt.RunStateless(ctx, StatelessRequest{AgentID: "tester", Messages: userMsgs("hi"), UserID: user,
		SlotPool: KeySlotPool(keyID), MaxTurns: n}, emit)
	return err
}

// keyTurn is a project chat turn of user on a new session in the slots
// of an API key with max_parallel n; it returns the StartTurn error.
func (h *harness) keyTurn(ctx context.Context, user, keyID string, n int, emit func(Event)) error {
	k := newKey()
	k.UserID = user
	tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "tester", Message: "hi", SlotPool: KeySlotPool(keyID), MaxTurns: n})
	if err != nil {
		return err
	}
	tr.Run(ctx, emit)
	return nil
}

// TestKeySlotPool: the runs of an API key with its own max_parallel take
// the key's slots, not the user's: they run beyond MaxTurnsPerUser (the
// user's own slots all taken) up to the key's cap, both kinds of turn
// counted together; the user's own cap and another key's are apart.
func TestKeySlotPool(t *testing.T) {
	h := newHarness(t, nil, func(o *Options) { o.MaxTurnsPerUser = 1 })
	h.hold(t, "alice", true) // alice's only slot
	wantFull(t, "alice's own run", h.tryStateless("alice"), 1)

	const n = 3
	h.holdRun(t, func(ctx context.Context, emit func(Event)) error { return h.keyTurn(ctx, "alice", "k1", n, emit) })
	for range n - 1 {
		h.holdRun(t, func(ctx context.Context, emit func(Event)) error { return h.keyStateless(ctx, "alice", "k1", n, emit) })
	}
	noop := func(Event) {}
	wantFull(t, "stateless run beyond the key's cap", h.keyStateless(context.Background(), "alice", "k1", n, noop), n)
	wantFull(t, "turn beyond the key's cap", h.keyTurn(context.Background(), "alice", "k1", n, noop), n)
	if err := h.keyStateless(context.Background(), "alice", "k2", 1, noop); err != nil {
		t.Fatalf("another key: %v", err)
	}
	// A pool without a cap is the user's.
	wantFull(t, "a pool without MaxTurns", h.keyStateless(context.Background(), "alice", "k3", 0, noop), 1)
}
