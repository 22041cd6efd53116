package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// appendGate is the SQLite store whose appends that match either fail
// with fail or wait for open to be closed (giving up after a while, so
// that a wrong order fails the test rather than hanging it).
type appendGate struct {
	*sqlite.Store
	match func(msgs []store.Message) bool
	open  <-chan struct{}
	fail  error
}

func (g appendGate) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	if g.match(msgs) {
		if g.fail != nil {
			return nil, g.fail
		}
		select {
		case <-g.open:
		case <-time.After(5 * time.Second):
			return nil, errors.New("what was to run beside this append had not started")
		}
	}
	return g.Store.AppendMessages(ctx, k, msgs)
}

// toolMessages matches the append of a step's tool messages.
func toolMessages(msgs []store.Message) bool { return len(msgs) > 0 && msgs[0].Role == store.RoleTool }

// stepCall matches the append of a step's call (an assistant message with
// tool calls).
func stepCall(msgs []store.Message) bool {
	return len(msgs) > 0 && msgs[0].Role == store.RoleAssistant && len(msgs[0].ToolCalls) > 0
}

// stepThenAnswer scripts the LLM: a call of add, then, once the request
// holds the tool's result, the answer; answering closes answering once.
func stepThenAnswer(h *harness, answering chan struct{}) {
	var once sync.Once
	h.llm.SetHandler(func(req llmtest.Request) llmtest.Reply {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			once.Do(func() { close(answering) })
			return llmtest.Reply{Text: "3."}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":2}`}}}
	})
}

// TestToolMessagesStoredBesideTheNextCall: a step's tool messages are
// stored while the next LLM call runs (here their append waits for that
// call to reach the LLM), and before the answer after them.
func TestToolMessagesStoredBesideTheNextCall(t *testing.T) {
	answering := make(chan struct{})
	h := newHarness(t, []Tool{addTool(false)}, func(o *Options) {
		o.Store = appendGate{Store: o.Store.(*sqlite.Store), match: toolMessages, open: answering}
	})
	stepThenAnswer(h, answering)
	k := newKey()
	ev := waitFor(t, h.startRun(context.Background(), TurnRequest{Key: k, Message: "add 1 and 2"}, nil), "the turn")
	checkEnd(t, ev, false)
	var got []string
	for _, m := range h.messages(k) {
		got = append(got, string(m.Role)+":"+m.Content)
	}
	if strings.Join(got, " ") != "user:add 1 and 2 assistant: tool:3 assistant:3." {
		t.Fatalf("stored %q", got)
	}
	if s := h.session(k); s.MessageCount != 4 || s.Stats.ToolCalls["add"] != 1 {
		t.Fatalf("session %+v", s)
	}
}

// TestToolMessagesNotStoredEndTheTurn: when a step's tool messages cannot
// be stored, the turn ends with the fixed sentence, the detail logged,
// and no answer stored after the missing messages.
func TestToolMessagesNotStoredEndTheTurn(t *testing.T) {
	const detail = "disk full"
	logs := newLogRecorder()
	h := newHarness(t, []Tool{addTool(false)}, withLogs(logs), func(o *Options) {
		o.Store = appendGate{Store: o.Store.(*sqlite.Store), match: toolMessages, fail: errors.New(detail)}
	})
	stepThenAnswer(h, make(chan struct{}))
	k := newKey()
	ev := waitFor(t, h.startRun(context.Background(), TurnRequest{Key: k, Message: "add 1 and 2"}, nil), "the turn")
	if msg := checkEnd(t, ev, true); msg != saveFailedText {
		t.Fatalf("error = %q", msg)
	}
	var roles []string
	for _, m := range h.messages(k) {
		roles = append(roles, string(m.Role))
	}
	if strings.Join(roles, " ") != "user assistant" {
		t.Fatalf("stored %v", roles)
	}
	logged := false
	for _, r := range logs.records() {
		logged = logged || strings.Contains(r.text, detail)
	}
	if !logged {
		t.Fatalf("%q was not logged", detail)
	}
}

// TestReadingStepRunsBesideItsCall: the tools of a step whose calls only
// read run while the step's call is stored (here its append waits for the
// tool to start); a step that changes something is stored before its tool
// runs (the tool finds its call in the store), so that a crash leaves it
// to answer as interrupted.
func TestReadingStepRunsBesideItsCall(t *testing.T) {
	for _, changes := range []bool{false, true} {
		t.Run(map[bool]string{false: "reads", true: "changes"}[changes], func(t *testing.T) {
			started := make(chan struct{})
			var once sync.Once
			var h *harness
			k := newKey()
			var storedBefore bool
			tool := Tool{Name: "probe", SideEffects: changes,
				Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
				Run: func(context.Context, json.RawMessage) (string, error) {
					msgs, err := h.st.ListMessages(context.Background(), k, 0)
					storedBefore = err == nil && len(msgs) > 0 && len(msgs[len(msgs)-1].ToolCalls) == 1
					once.Do(func() { close(started) })
					return "ok", nil
				}}
			h = newHarness(t, []Tool{tool}, func(o *Options) {
				gate := started
				if changes {
					closed := make(chan struct{})
					close(closed)
					gate = closed
				}
				o.Store = appendGate{Store: o.Store.(*sqlite.Store), match: stepCall, open: gate}
			})
			h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_p", Name: "probe", Arguments: `{}`}}},
				llmtest.Reply{Text: "Done."})
			ev := waitFor(t, h.startRun(context.Background(), TurnRequest{Key: k, Message: "probe"}, nil), "the turn")
			checkEnd(t, ev, false)
			if changes && !storedBefore {
				t.Fatal("a changing step's tool ran before its call was stored")
			}
			var roles []string
			for _, m := range h.messages(k) {
				roles = append(roles, string(m.Role))
			}
			if strings.Join(roles, " ") != "user assistant tool assistant" {
				t.Fatalf("stored %v", roles)
			}
		})
	}
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
		o.Store = appendGate{Store: o.Store.(*sqlite.Store), match: toolMessages, open: refreshing}
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
