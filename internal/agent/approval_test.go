package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

// labTool is a tool that changes the lab and counts its runs.
func labTool(runs *atomic.Int32) Tool {
	t := addTool(true)
	t.Name, t.Tier = "configure", TierConfigure
	run := t.Run
	t.Run = func(ctx context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		return run(ctx, args)
	}
	return t
}

func TestCheckDecisions(t *testing.T) {
	pending := []store.PendingApproval{{ToolCallID: "a"}, {ToolCallID: "b"}}
	tests := []struct {
		name      string
		pending   []store.PendingApproval
		decisions []Decision
		want      error
	}{
		{"all decided", pending, []Decision{{ToolCallID: "b"}, {ToolCallID: "a", Approve: true}}, nil},
		{"nothing pending", nil, []Decision{{ToolCallID: "a"}}, ErrNothingPending},
		{"unknown", pending, []Decision{{ToolCallID: "a"}, {ToolCallID: "b"}, {ToolCallID: "c"}}, ErrBadDecisions},
		{"twice", pending, []Decision{{ToolCallID: "a"}, {ToolCallID: "a"}}, ErrBadDecisions},
		{"missing", pending, []Decision{{ToolCallID: "a"}}, ErrBadDecisions},
	}
	for _, tt := range tests {
		if err := checkDecisions(tt.pending, tt.decisions); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestRejectAllDeclinesPending: a paused session refuses a new message
// until it declines the pending calls; they become declined tool messages
// before the new user message, and the tool never runs.
func TestRejectAllDeclinesPending(t *testing.T) {
	var runs atomic.Int32
	h := newHarness(t, []Tool{labTool(&runs)})
	k := newKey()
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "configure", Arguments: `{"a":1,"b":2}`}}})
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "change it", Approval: "changes"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	if ar := ev.ofType(EventApprovalRequired); len(ar) != 1 || ar[0].ToolCallID != "call_1" || ar[0].Approval.Summary == "" {
		t.Fatalf("events %s", ev)
	}
	if p := h.session(k).PendingApprovals(); len(p) != 1 || p[0].ToolCallID != "call_1" {
		t.Fatalf("pending %+v", p)
	}
	if _, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "hello"}); !errors.Is(err, ErrApprovalPending) {
		t.Fatalf("a message on a paused session: %v", err)
	}
	h.llm.Enqueue(llmtest.Reply{Text: "Fine, nothing changed."})
	tr, err = h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "tester", Message: "never mind", RejectPending: true})
	if err != nil {
		t.Fatal(err)
	}
	ev = nil
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	if runs.Load() != 0 {
		t.Fatal("a declined tool ran")
	}
	msgs := h.messages(k)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role+":"+m.Content)
	}
	want := "user:change it|assistant:|tool:declined by the user|user:never mind|assistant:Fine, nothing changed."
	if got := strings.Join(roles, "|"); got != want {
		t.Fatalf("stored %q\nwant   %q", got, want)
	}
	if p := h.session(k).PendingApprovals(); len(p) != 0 {
		t.Fatalf("pending left: %+v", p)
	}
	if h.session(k).Metadata["approval"] != "changes" {
		t.Fatalf("the request's policy was not recorded: %v", h.session(k).Metadata)
	}
	entries, _, err := h.st.ListAudit(context.Background(), k.ProjectID, k.UserID, store.Page{Limit: 10})
	if err != nil || len(entries) != 1 || entries[0].Status != store.AuditDeclined || entries[0].Decision != store.DecisionDeclined {
		t.Fatalf("audit %+v, %v", entries, err)
	}
}

// TestApprovalOffRunsAndAudits: without a policy a lab change runs at once
// (as before) and is audited as not needing a decision.
func TestApprovalOffRunsAndAudits(t *testing.T) {
	var runs atomic.Int32
	h := newHarness(t, []Tool{labTool(&runs)})
	k := newKey()
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "configure", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{Text: "Done."})
	ev := h.turn(k, "change it")
	checkEnd(t, ev, false)
	if runs.Load() != 1 || len(ev.ofType(EventApprovalRequired)) != 0 || len(ev.ofType(EventSnapshot)) != 0 {
		t.Fatalf("runs %d, events %s", runs.Load(), ev)
	}
	entries, _, err := h.st.ListAudit(context.Background(), k.ProjectID, k.UserID, store.Page{Limit: 10})
	if err != nil || len(entries) != 1 || entries[0].Status != store.AuditSuccess || entries[0].Decision != store.DecisionNotRequired {
		t.Fatalf("audit %+v, %v", entries, err)
	}
}

// failingSnapshots refuses every snapshot.
type failingSnapshots struct{ calls atomic.Int32 }

func (*failingSnapshots) Applies(string) bool { return true }
func (f *failingSnapshots) Take(context.Context, string, string) (string, error) {
	f.calls.Add(1)
	return "", errors.New("403: Permission denied (privilege Snapshot.Allocate is required)")
}

// TestSnapshotFailureIsReported: a snapshot that fails is reported in the
// stream and the change goes on, once per turn.
func TestSnapshotFailureIsReported(t *testing.T) {
	var runs atomic.Int32
	snaps := &failingSnapshots{}
	h := newHarness(t, []Tool{labTool(&runs)}, func(o *Options) { o.Snapshots = snaps })
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "configure", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "configure", Arguments: `{"a":3,"b":4}`}}},
		llmtest.Reply{Text: "Done."})
	ev := h.turn(newKey(), "change it twice")
	checkEnd(t, ev, false)
	s := ev.ofType(EventSnapshot)
	if len(s) != 1 || s[0].Snapshot.ID != "" || !strings.Contains(s[0].Snapshot.Error, "Snapshot.Allocate") {
		t.Fatalf("snapshot events %s", ev)
	}
	if runs.Load() != 2 || snaps.calls.Load() != 1 {
		t.Fatalf("runs %d, snapshot attempts %d", runs.Load(), snaps.calls.Load())
	}
}

// TestStatelessRefusesChangesUnderApproval: on the gateway no person can
// be asked, so a configured policy refuses the change with a message that
// tells the model to ask in text.
func TestStatelessRefusesChangesUnderApproval(t *testing.T) {
	var runs atomic.Int32
	h := newHarness(t, []Tool{labTool(&runs)})
	h.res.approval = "changes"
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "configure", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{Text: "May I change it?"})
	var ev events
	res, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("change it"), UserID: "u"}, ev.add)
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 0 || res.Content != "May I change it?" {
		t.Fatalf("runs %d, result %+v", runs.Load(), res)
	}
	reqs := h.requests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; m.Role != "tool" || !strings.Contains(m.Content, "ask them to approve") {
		t.Fatalf("the model was told %+v", m)
	}
}

// TestStatelessAuditsLabChanges: a /v1 run stores nothing of the
// conversation, but its lab changes are audited in the project they name.
func TestStatelessAuditsLabChanges(t *testing.T) {
	var runs atomic.Int32
	h := newHarness(t, []Tool{labTool(&runs)})
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "configure", Arguments: `{"a":1,"b":2,"project_id":"p-9"}`}}},
		llmtest.Reply{Text: "Done."})
	var ev events
	if _, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("change it"), UserID: "u"}, ev.add); err != nil {
		t.Fatal(err)
	}
	entries, _, err := h.st.ListAudit(context.Background(), "p-9", "u", store.Page{Limit: 10})
	if err != nil || len(entries) != 1 || entries[0].Tool != "configure" || entries[0].Decision != store.DecisionNotRequired || runs.Load() != 1 {
		t.Fatalf("audit %+v, %v, runs %d", entries, err, runs.Load())
	}
}
