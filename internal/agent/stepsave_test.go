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

// failingToolAppends is the SQLite store whose appends of tool messages
// fail with err.
type failingToolAppends struct {
	*sqlite.Store
	err error
}

func (f failingToolAppends) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	if len(msgs) > 0 && msgs[0].Role == store.RoleTool {
		return nil, f.err
	}
	return f.Store.AppendMessages(ctx, k, msgs)
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
		o.Store = toolAppendGate{Store: o.Store.(*sqlite.Store), open: answering}
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
		o.Store = failingToolAppends{Store: o.Store.(*sqlite.Store), err: errors.New(detail)}
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

// assistantAppendGate is the SQLite store whose appends of an assistant
// message with tool calls wait for open to be closed (giving up after a
// while, so that a wrong order fails the test rather than hanging it).
type assistantAppendGate struct {
	*sqlite.Store
	open <-chan struct{}
}

func (g assistantAppendGate) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	if len(msgs) > 0 && msgs[0].Role == store.RoleAssistant && len(msgs[0].ToolCalls) > 0 {
		select {
		case <-g.open:
		case <-time.After(5 * time.Second):
			return nil, errors.New("the step's tool had not started while its call was stored")
		}
	}
	return g.Store.AppendMessages(ctx, k, msgs)
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
				o.Store = assistantAppendGate{Store: o.Store.(*sqlite.Store), open: gate}
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
