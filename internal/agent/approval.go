package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"agentchat/internal/approval"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// Approvals: a turn whose model asks for tools that need a person's
// decision (the approval policy, package approval) runs the others, stores
// the assistant message with all its calls, marks the session as awaiting
// approval (store.MetadataPendingApprovals) and ends. A later turn decides
// them (TurnRequest.Decisions) on any instance: it runs the approved calls,
// answers the declined ones, and the model goes on. The pause lives in the
// store, not in a process.

// Errors of StartTurn about approvals.
var (
	// ErrApprovalPending: the session awaits decisions on tool calls; a new
	// message must decide them first (or decline them all:
	// TurnRequest.RejectPending).
	ErrApprovalPending = errors.New("tool calls of this session await your decision")
	// ErrNothingPending: decisions were sent, but no call awaits one
	// (never asked, or already decided).
	ErrNothingPending = errors.New("no tool call of this session awaits a decision")
	// ErrBadDecisions: decisions that name unknown calls, a call twice, or
	// leave some pending call undecided; the wrapped message says which.
	ErrBadDecisions = errors.New("invalid decisions")
)

// Decision is a person's decision on one pending tool call.
type Decision struct {
	ToolCallID string
	Approve    bool
	// Note is the person's reason, given to the model with a decline.
	Note string
}

// Snapshotter takes a GNS3 project snapshot before the first lab change of
// a turn.
type Snapshotter interface {
	// Applies reports whether a turn in mode takes a snapshot.
	Applies(mode string) bool
	// Take snapshots projectID under name as the caller of ctx and
	// returns the snapshot's id.
	Take(ctx context.Context, projectID, name string) (string, error)
}

// ApprovalEvent is the call of EventApprovalRequired.
type ApprovalEvent struct {
	Arguments string
	Summary   string
}

// SnapshotEvent is EventSnapshot: the snapshot taken, or why none was.
type SnapshotEvent struct {
	ID   string
	Name string
	// Error is set when the snapshot failed (the turn goes on without).
	Error string
}

// Outputs of calls that were not run.
const (
	declinedPrefix = "declined by the user"
	// gatewayRefusal answers a call that needs approval where no person
	// can be asked (the stateless /v1 gateway).
	gatewayRefusal = "Error: this change needs the user's approval, which cannot be asked for here. " +
		"It was not made. Do not call the tool again: tell the user in text exactly what you would change and ask them to approve it."
)

// declinedOutput is the tool message of a declined call.
func declinedOutput(note string) string {
	note = strings.TrimSpace(note)
	if note == "" {
		return declinedPrefix
	}
	return declinedPrefix + ": " + note
}

// checkDecisions checks a continuation's decisions against the pending
// calls: every pending call decided exactly once, no other.
func checkDecisions(pending []store.PendingApproval, decisions []Decision) error {
	if len(pending) == 0 {
		return ErrNothingPending
	}
	want := map[string]bool{}
	for _, p := range pending {
		want[p.ToolCallID] = true
	}
	seen := map[string]bool{}
	for _, d := range decisions {
		switch {
		case seen[d.ToolCallID]:
			return fmt.Errorf("%w: tool_call_id %q is decided twice", ErrBadDecisions, d.ToolCallID)
		case !want[d.ToolCallID]:
			return fmt.Errorf("%w: tool_call_id %q does not await a decision in this session", ErrBadDecisions, truncateText(d.ToolCallID, 80))
		}
		seen[d.ToolCallID] = true
	}
	var missing []string
	for _, p := range pending {
		if !seen[p.ToolCallID] {
			missing = append(missing, p.ToolCallID)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: decide every pending call at once; missing: %s", ErrBadDecisions, strings.Join(missing, ", "))
	}
	return nil
}

// truncateText cuts s to n bytes at a rune boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// split partitions a step's calls into those that run now and those that
// wait for a decision; where no one can be asked (canPause false), the
// latter are refused at once and returned as results.
func (l *loop) split(calls []openai.ToolCall) (run []openai.ToolCall, wait []openai.ToolCall, refused []toolResult) {
	for _, c := range calls {
		t, ok := l.tools[c.Function.Name]
		if !ok || !l.policy.Needs(t.Tier.ChangesLab()) {
			run = append(run, c)
			continue
		}
		if !l.canPause {
			refused = append(refused, toolResult{call: c, output: gatewayRefusal, failed: true})
			continue
		}
		wait = append(wait, c)
	}
	return run, wait, refused
}

// changesLab reports whether one of calls is of a tool that changes the lab.
func (l *loop) changesLab(calls []openai.ToolCall) bool {
	for _, c := range calls {
		if t, ok := l.tools[c.Function.Name]; ok && t.Tier.ChangesLab() {
			return true
		}
	}
	return false
}

// runStep runs the calls of one step that need no decision (after a
// snapshot when one of them changes the lab), and returns the results in
// call order and the calls that wait for a decision.
func (l *loop) runStep(ctx context.Context, calls []openai.ToolCall) ([]toolResult, []openai.ToolCall) {
	run, wait, refused := l.split(calls)
	if l.changesLab(run) {
		l.rec.beforeChange(ctx)
	}
	ran := l.runTools(ctx, run)
	byID := make(map[string]toolResult, len(ran)+len(refused))
	for _, r := range append(ran, refused...) {
		byID[r.call.ID] = r
	}
	results := make([]toolResult, 0, len(byID))
	for _, c := range calls {
		if r, ok := byID[c.ID]; ok {
			results = append(results, r)
		}
	}
	for _, r := range refused {
		l.em.emit(Event{Type: EventToolEnd, ToolName: r.call.Function.Name, ToolCallID: r.call.ID, ToolOutput: r.output})
	}
	return results, wait
}

// decide runs the approved calls of pending (after a snapshot when one of
// them changes the lab) and answers the declined ones, in call order.
func (l *loop) decide(ctx context.Context, pending []store.PendingApproval, decisions []Decision, by string) []toolResult {
	byID := map[string]Decision{}
	for _, d := range decisions {
		byID[d.ToolCallID] = d
	}
	var approved []openai.ToolCall
	for _, p := range pending {
		if byID[p.ToolCallID].Approve {
			approved = append(approved, pendingCall(p))
		}
	}
	if l.changesLab(approved) {
		l.rec.beforeChange(ctx)
	}
	ran := l.runTools(ctx, approved)
	results := make([]toolResult, 0, len(pending))
	i := 0
	for _, p := range pending {
		d := byID[p.ToolCallID]
		if d.Approve {
			r := ran[i]
			i++
			r.decision, r.decidedBy = store.DecisionApproved, by
			results = append(results, r)
			continue
		}
		c := pendingCall(p)
		out := declinedOutput(d.Note)
		l.em.emit(Event{Type: EventToolEnd, ToolName: p.ToolName, ToolCallID: p.ToolCallID, ToolOutput: out})
		results = append(results, toolResult{call: c, output: out, failed: true, declined: true,
			labChange: l.changesLab([]openai.ToolCall{c}), decision: store.DecisionDeclined, decidedBy: by})
	}
	return results
}

// declineAll answers every pending call as declined (a new message sent
// with approval_decision reject_all).
func declineAll(pending []store.PendingApproval, by string) []toolResult {
	out := make([]toolResult, len(pending))
	for i, p := range pending {
		out[i] = toolResult{call: pendingCall(p), output: declinedOutput(""), failed: true, declined: true,
			labChange: true, decision: store.DecisionDeclined, decidedBy: by}
	}
	return out
}

// pendingCall is the tool call of a pending approval.
func pendingCall(p store.PendingApproval) openai.ToolCall {
	return openai.ToolCall{ID: p.ToolCallID, Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: p.ToolName, Arguments: p.Arguments}}
}

// pendingOf makes the pending approvals of calls.
func pendingOf(calls []openai.ToolCall, turnID string, at time.Time) []store.PendingApproval {
	out := make([]store.PendingApproval, len(calls))
	for i, c := range calls {
		out[i] = store.PendingApproval{ToolCallID: c.ID, ToolName: c.Function.Name, Arguments: c.Function.Arguments,
			Summary: approval.Summary(c.Function.Name, c.Function.Arguments), TurnID: turnID, RequestedAt: at}
	}
	return out
}
