package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

// startRun starts a turn of the tester agent and runs it in the
// background; the channel receives its events once Run returned.
func (h *harness) startRun(ctx context.Context, req TurnRequest, onEvent func(Event)) <-chan events {
	h.t.Helper()
	if req.AgentID == "" {
		req.AgentID = "tester"
	}
	tr, err := h.rt.StartTurn(context.Background(), req)
	if err != nil {
		h.t.Fatalf("start turn: %v", err)
	}
	ended := make(chan events, 1)
	go func() {
		var ev events
		tr.Run(ctx, func(e Event) {
			ev.add(e)
			if onEvent != nil {
				onEvent(e)
			}
		})
		ended <- ev
	}()
	return ended
}

// checkNoWarnings fails on a log record at WARN or above.
func checkNoWarnings(t *testing.T, rec logRecorder) {
	t.Helper()
	for _, r := range rec.records() {
		if r.level >= slog.LevelWarn {
			t.Fatalf("unexpected %s log %q %s", r.level, r.msg, r.text)
		}
	}
}

// TestSessionDeletedDuringTurn: deleting the session (or its project)
// while the LLM streams stops the turn quietly: done without an error
// event, the upstream call cancelled, nothing written back, no warnings.
func TestSessionDeletedDuringTurn(t *testing.T) {
	ctx := context.Background()
	delSession := func(h *harness, k store.Key) error { return h.st.DeleteSession(ctx, k) }
	for _, tc := range []struct {
		name string
		del  func(h *harness, k store.Key) error
		// oneStep: the deletion may come before the user message is
		// stored (its append or the watcher notices, whichever is first);
		// otherwise a first tool step has stored it, so that only the
		// watcher can notice while the second call hangs.
		oneStep bool
	}{
		{name: "session", del: delSession},
		{name: "project", del: func(h *harness, k store.Key) error { return h.st.DeleteProject(ctx, k.ProjectID) }},
		{name: "session, first step", del: delSession, oneStep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newLogRecorder()
			h := newHarness(t, []Tool{addTool(false)}, withLogs(rec))
			reply, onEvent, first := interruptible()
			if !tc.oneStep {
				h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":1,"b":2}`}}})
			}
			h.llm.Enqueue(reply)
			k := newKey()
			ended := h.startRun(ctx, TurnRequest{Key: k, Message: "tell me"}, onEvent)
			waitFor(t, first, "the first token")
			if err := tc.del(h, k); err != nil {
				t.Fatalf("delete: %v", err)
			}
			ev := waitFor(t, ended, "the end of the turn")
			checkEnd(t, ev, false)
			waitFor(t, h.llm.Disconnects(), "upstream disconnect")
			if _, err := h.st.GetSession(ctx, k); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("session after the turn: err = %v, want ErrNotFound", err)
			}
			checkNoWarnings(t, rec)
		})
	}
}

// TestEarlyFailureKeepsUserMessage: a turn that ends before its LLM call
// still stores the user's message (with the history's repairs), and the
// error event is a fixed sentence while the log keeps the detail.
func TestEarlyFailureKeepsUserMessage(t *testing.T) {
	const detail = "dial tcp 10.1.2.3:3080: connect: connection refused"
	rec := newLogRecorder()
	h := newHarness(t, []Tool{addTool(false)}, withLogs(rec))
	h.rt.o.Agents.Register(&Agent{ID: "broken", Prepare: func(context.Context, TurnInfo) (Preparation, error) {
		return Preparation{}, fmt.Errorf("load topology: %w", errors.New(detail))
	}})
	ctx := context.Background()

	t.Run("prepare fails on a new session", func(t *testing.T) {
		k := newKey()
		ev := waitFor(t, h.startRun(ctx, TurnRequest{Key: k, AgentID: "broken", Message: "hi"}, nil), "the turn")
		if msg := checkEnd(t, ev, true); msg != "Could not prepare the agent for this turn." {
			t.Fatalf("error = %q", msg)
		}
		msgs := h.messages(k)
		if len(msgs) != 1 || msgs[0].Role != store.RoleUser || msgs[0].Content != "hi" {
			t.Fatalf("stored = %+v", msgs)
		}
		if s := h.session(k); s.MessageCount != 1 || s.Stats.Errors != 1 || s.Stats.Turns != 1 {
			t.Fatalf("session = %+v", s)
		}
		logged := false
		for _, r := range rec.records() {
			logged = logged || (r.msg == "prepare agent" && strings.Contains(r.text, detail))
		}
		if !logged {
			t.Fatalf("the detail was not logged: %+v", rec.records())
		}
	})

	t.Run("prepare fails after a crashed tool call", func(t *testing.T) {
		k := newKey()
		if err := h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.st.AppendMessages(ctx, k, []store.Message{
			{Role: store.RoleUser, Content: "add"},
			{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_a", Type: "function", Function: store.FunctionCall{Name: "add", Arguments: `{"a":1,"b":1}`}}}},
		}); err != nil {
			t.Fatal(err)
		}
		ev := waitFor(t, h.startRun(ctx, TurnRequest{Key: k, AgentID: "broken", Message: "again"}, nil), "the turn")
		checkEnd(t, ev, true)
		msgs := h.messages(k)
		if len(msgs) != 4 || msgs[2].ToolCallID != "call_a" || msgs[2].Metadata["repaired"] != true || msgs[3].Content != "again" {
			t.Fatalf("stored = %+v", msgs)
		}
	})

	t.Run("client gone before the call", func(t *testing.T) {
		k := newKey()
		gone, cancel := context.WithCancel(ctx)
		cancel()
		ev := waitFor(t, h.startRun(gone, TurnRequest{Key: k, Message: "hello?"}, nil), "the turn")
		checkEnd(t, ev, false)
		if msgs := h.messages(k); len(msgs) != 1 || msgs[0].Content != "hello?" {
			t.Fatalf("stored = %+v", msgs)
		}
		if s := h.session(k); s.MessageCount != 1 || s.Stats.AbortedTurns != 1 {
			t.Fatalf("session = %+v", s)
		}
	})
	if n := len(h.requests()); n != 0 {
		t.Fatalf("the LLM was called %d times", n)
	}
}

// TestTitleCallHasItsOwnTimeout: a title call that hangs does not hold
// the turn back for the LLM's whole call timeout; the fallback title is
// used and the hung call is cancelled.
func TestTitleCallHasItsOwnTimeout(t *testing.T) {
	h := newHarness(t, nil)
	h.rt.titleTimeout = 50 * time.Millisecond
	h.llm.Enqueue(llmtest.Reply{Text: "An answer."}, llmtest.Reply{Hang: true})
	k := newKey()
	ev := waitFor(t, h.startRun(context.Background(), TurnRequest{Key: k, Message: "Name this conversation please"}, nil), "the turn")
	checkEnd(t, ev, false)
	waitFor(t, h.llm.Disconnects(), "the title call's disconnect")
	if s := h.session(k); s.Title != "Name this conversation please" || s.LLMCallsCount != 1 {
		t.Fatalf("session = %+v", s)
	}
	if got := NewRuntime(Options{}).titleTimeout; got != 15*time.Second {
		t.Fatalf("default title timeout = %s", got)
	}
}

// TestLogsCarryTheContext: runtime logs are made with the caller's
// context, so that a context-aware handler adds the request id.
func TestLogsCarryTheContext(t *testing.T) {
	rec := newLogRecorder()
	failing := Tool{Name: "fail", Run: func(context.Context, json.RawMessage) (string, error) { return "", errors.New("nope") }}
	h := newHarness(t, []Tool{failing}, withLogs(rec))
	ctx := context.WithValue(context.Background(), ctxKey{}, "req-1")

	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "fail", Arguments: "{}"}}}, llmtest.Reply{Status: 500})
	checkEnd(t, waitFor(t, h.startRun(ctx, TurnRequest{Key: newKey(), Message: "go"}, nil), "the turn"), true)

	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "fail", Arguments: "{}"}}}, llmtest.Reply{Text: "ok"})
	if _, err := h.rt.RunStateless(ctx, StatelessRequest{AgentID: "tester", Messages: userMsgs("go")}, nil); err != nil {
		t.Fatal(err)
	}

	recs := rec.records()
	var msgs []string
	for _, r := range recs {
		msgs = append(msgs, r.msg)
		if r.mark != "req-1" {
			t.Fatalf("log %q %s lacks the context", r.msg, r.text)
		}
	}
	if got := strings.Join(msgs, ","); strings.Count(got, "tool failed") != 2 || !strings.Contains(got, "turn failed") {
		t.Fatalf("logs = %q", got)
	}
}

// TestMaxHistory: a turn loads the last MaxHistory messages, from the
// first user message among them; repairs still apply in that window.
func TestMaxHistory(t *testing.T) {
	if got := NewRuntime(Options{}).o.MaxHistory; got != 200 || DefaultMaxHistory != 200 {
		t.Fatalf("default MaxHistory = %d", got)
	}
	ctx := context.Background()
	call := func(id string) []store.ToolCall {
		return []store.ToolCall{{ID: id, Type: "function", Function: store.FunctionCall{Name: "add", Arguments: `{"a":1,"b":1}`}}}
	}
	tests := []struct {
		name   string
		max    int
		stored []store.Message
		want   []string
		// repaired: a repair message is stored before the user message.
		repaired bool
	}{
		{
			name: "window starts inside a tool step", max: 5,
			stored: []store.Message{
				{Role: store.RoleUser, Content: "one"},
				{Role: store.RoleAssistant, ToolCalls: call("call_1")},
				{Role: store.RoleTool, Content: "2", ToolCallID: "call_1", Name: "add"},
				{Role: store.RoleAssistant, Content: "r1"},
				{Role: store.RoleUser, Content: "two"},
				{Role: store.RoleAssistant, Content: "r2"},
			},
			want: []string{"user:two", "assistant:r2", "user:new"},
		},
		{
			name: "everything fits", max: 10,
			stored: []store.Message{
				{Role: store.RoleUser, Content: "one"},
				{Role: store.RoleAssistant, Content: "r1"},
			},
			want: []string{"user:one", "assistant:r1", "user:new"},
		},
		{
			name: "dangling call in the window", max: 3,
			stored: []store.Message{
				{Role: store.RoleUser, Content: "one"},
				{Role: store.RoleAssistant, Content: "r1"},
				{Role: store.RoleUser, Content: "add"},
				{Role: store.RoleAssistant, ToolCalls: call("call_9")},
			},
			want:     []string{"user:add", "assistant:+add#call_9", "tool:" + interruptedToolOutput + "#call_9", "user:new"},
			repaired: true,
		},
		{
			name: "no user message in the window", max: 2,
			stored: []store.Message{
				{Role: store.RoleUser, Content: "one"},
				{Role: store.RoleAssistant, ToolCalls: call("call_1")},
				{Role: store.RoleTool, Content: "2", ToolCallID: "call_1", Name: "add"},
			},
			want: []string{"user:new"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, []Tool{addTool(false)}, func(o *Options) { o.MaxHistory = tc.max })
			k := newKey()
			if err := h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.st.AppendMessages(ctx, k, tc.stored); err != nil {
				t.Fatal(err)
			}
			h.llm.Enqueue(llmtest.Reply{Text: "fine"})
			checkEnd(t, h.turn(k, "new"), false)
			got := roles(h.requests()[0].Messages)[1:] // after the system prompt
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("prompt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			msgs := h.messages(k)
			n := len(tc.stored)
			wantStored := n + 2
			if tc.repaired {
				wantStored++
				if m := msgs[n]; m.ToolCallID != "call_9" || m.Metadata["repaired"] != true {
					t.Fatalf("repair = %+v", m)
				}
			}
			if len(msgs) != wantStored {
				t.Fatalf("stored %d messages, want %d", len(msgs), wantStored)
			}
		})
	}
}
