package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/store"
)

// calledClient is an llm.Client whose streams close called (once) and
// answer "hello".
type calledClient struct{ called chan struct{} }

func (c calledClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Result, error) {
	select {
	case <-c.called:
	default:
		close(c.called)
	}
	if err := onDelta(llm.Delta{Content: "hello"}); err != nil {
		return &llm.Result{}, err
	}
	return &llm.Result{Content: "hello", FinishReason: "stop"}, nil
}

func (calledClient) Complete(ctx context.Context, req llm.Request) (*llm.Result, error) {
	return &llm.Result{Content: "Greeting", FinishReason: "stop"}, nil
}

func (calledClient) Model() string { return "called-model" }

// createStore is a store whose CreateLeasedSession first waits for wait
// (when set) and fails with fail (when set).
type createStore struct {
	store.Store
	wait <-chan struct{}
	fail error
}

func (c *createStore) CreateLeasedSession(ctx context.Context, s *store.Session, owner string, ttl time.Duration) error {
	if c.wait != nil {
		select {
		case <-c.wait:
		case <-time.After(20 * time.Second): // a hang detector, not a timing assertion
			return errors.New("the LLM was not called before the session was written")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.fail != nil {
		return c.fail
	}
	return c.Store.CreateLeasedSession(ctx, s, owner, ttl)
}

// TestNewSessionWrittenBesideTheFirstCall: the first LLM call of a new
// session's turn does not wait for the session's write (the write here
// waits for the call: in sequence the turn would fail), and the turn ends
// with everything stored.
func TestNewSessionWrittenBesideTheFirstCall(t *testing.T) {
	called := make(chan struct{})
	cs := &createStore{wait: called}
	h := newHarness(t, nil, func(o *Options) {
		cs.Store = o.Store
		o.Store = cs
	})
	h.res.client = calledClient{called: called}
	k := newKey()
	k.ThreadID = ""
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	if msg := checkEnd(t, ev, false); msg != "" {
		t.Fatalf("turn error %q", msg)
	}
	k = tr.Session().Key()
	if msgs := h.messages(k); len(msgs) != 2 || msgs[0].Content != "hi" || msgs[1].Content != "hello" {
		t.Fatalf("stored %+v", msgs)
	}
	if err := h.st.AcquireLease(context.Background(), k, "next", time.Minute); err != nil {
		t.Fatalf("lease after the turn: %v", err)
	}
}

// TestNewSessionNotCreated: a new session whose write fails ends its turn
// with an error and nothing stored, and frees the user's slot.
func TestNewSessionNotCreated(t *testing.T) {
	cs := &createStore{fail: errors.New("disk full")}
	h := newHarness(t, nil, func(o *Options) {
		cs.Store = o.Store
		o.Store = cs
		o.MaxTurnsPerUser = 1
	})
	h.res.client = calledClient{called: make(chan struct{})}
	for _, run := range []bool{true, false} {
		k := newKey()
		k.ThreadID = ""
		tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "hi"})
		if err != nil {
			t.Fatal(err) // the slot of the turn before was freed
		}
		if !run {
			if err := tr.Release(context.Background()); err != nil {
				t.Fatalf("Release: %v", err)
			}
			continue
		}
		var ev events
		tr.Run(context.Background(), ev.add)
		if msg := checkEnd(t, ev, true); msg != notCreatedText {
			t.Fatalf("turn error %q, want %q", msg, notCreatedText)
		}
	}
	list, _, err := h.st.ListSessions(context.Background(), "project-1", "user-1", store.Page{Limit: 100})
	if err != nil || len(list) != 0 {
		t.Fatalf("sessions %+v, %v: want none", list, err)
	}
	slot, err := h.rt.takeTurnSlot(context.Background(), "user-1", "after", h.rt.o.MaxTurnsPerUser)
	if err != nil {
		t.Fatalf("the slot was not freed: %v", err)
	}
	slot.release(context.Background())
}
