package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// toolAppendGate is the SQLite store whose appends of tool messages wait
// for open to be closed (giving up after a while, so that a wrong order
// fails the test rather than hanging it).
type toolAppendGate struct {
	*sqlite.Store
	open <-chan struct{}
}

func (g toolAppendGate) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	if len(msgs) > 0 && msgs[0].Role == store.RoleTool {
		select {
		case <-g.open:
		case <-time.After(5 * time.Second):
			return nil, errors.New("what was to run beside the tool messages' append had not started")
		}
	}
	return g.Store.AppendMessages(ctx, k, msgs)
}

// TestRefreshBesideToolMessages: after a step whose tool changed the lab,
// the system prompt's refresh (a read of the lab) runs while the step's
// tool messages are stored (here they wait for it to start), and the next
// LLM call gets the refreshed prompt. (A refresh that panics ends the
// stream as any panic does: localserver's streaming panic test.)
func TestRefreshBesideToolMessages(t *testing.T) {
	refreshing := make(chan struct{})
	var once sync.Once
	h := newHarness(t, nil, func(o *Options) {
		o.Store = toolAppendGate{Store: o.Store.(*sqlite.Store), open: refreshing}
	})
	h.rt.o.Agents.Register(&Agent{ID: "lab", SystemPrompt: "Base.",
		Prepare: func(context.Context, TurnInfo) (Preparation, error) {
			return Preparation{
				Prompt: "view 0.",
				Skills: []Skill{{Name: "s", Tools: []Tool{addTool(true)}}},
				Refresh: func(context.Context) (string, error) {
					once.Do(func() { close(refreshing) })
					return "view 1.", nil
				},
			}, nil
		}})
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{Text: "3."})
	k := newKey()
	ev := waitFor(t, h.startRun(context.Background(), TurnRequest{Key: k, AgentID: "lab", Message: "add"}, nil), "the turn")
	checkEnd(t, ev, false)
	calls := agentCalls(h)
	if len(calls) != 2 {
		t.Fatalf("%d LLM calls", len(calls))
	}
	if sys := calls[1].Messages[0].Content; !strings.HasSuffix(sys, "view 1.") {
		t.Fatalf("second call's system prompt %q, want it to end with %q", sys, "view 1.")
	}
	var roles []string
	for _, m := range h.messages(k) {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant" {
		t.Fatalf("stored %s", got)
	}
}
