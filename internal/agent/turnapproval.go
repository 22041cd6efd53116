package agent

import (
	"context"
	"fmt"
	"strings"

	"agentchat/internal/approval"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// The project chat turn's side of approvals, snapshots and the audit
// trail (see approval.go).

// snapshotName is the name of a turn's snapshot: "copilot <session title
// or id> <UTC time>".
func (tr *turnRun) snapshotName() string {
	s := tr.t.session
	who := s.ThreadID
	if s.Title != "" && s.Title != store.DefaultTitle {
		who = s.Title
	}
	who = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, truncateText(who, 80))
	return "copilot " + who + " " + tr.t.r.o.Now().UTC().Format("2006-01-02 15:04:05Z")
}

// beforeChange implements recorder: before the turn's first lab change, a
// GNS3 snapshot is taken where it applies (Options.Snapshots and the
// turn's mode), announced (EventSnapshot) and recorded on the session; a
// failure is announced and the turn goes on without one.
func (tr *turnRun) beforeChange(ctx context.Context) {
	t := tr.t
	snap := t.r.o.Snapshots
	if tr.snapTried || snap == nil || !snap.Applies(t.mode) {
		return
	}
	tr.snapTried = true
	name := tr.snapshotName()
	id, err := snap.Take(ctx, t.req.Key.ProjectID, name)
	if err != nil {
		t.r.log.WarnContext(ctx, "snapshot before changes failed", "session", t.req.Key.ThreadID, "err", err)
		tr.em.emit(Event{Type: EventSnapshot, Snapshot: &SnapshotEvent{Name: name,
			Error: fmt.Sprintf("No snapshot was taken before the changes (%v); they go on without one, so undo is not available for them.", err)}})
		return
	}
	tr.snapshotID = id
	tr.em.emit(Event{Type: EventSnapshot, Snapshot: &SnapshotEvent{ID: id, Name: name}})
	rec := store.SnapshotRecord{SnapshotID: id, Name: name, TurnID: t.owner, TakenAt: t.r.o.Now().UTC()}
	pctx, cancel := tr.persistCtx()
	defer cancel()
	if _, err := t.r.o.Store.UpdateSessionMetadata(pctx, t.req.Key, map[string]any{store.MetadataLastSnapshot: rec}); err != nil {
		t.r.log.ErrorContext(ctx, "record snapshot on session", "session", t.req.Key.ThreadID, "err", err)
	}
}

// pause implements recorder: the calls that wait for a decision are
// stored on the session (store.MetadataPendingApprovals) and announced,
// one EventApprovalRequired each.
func (tr *turnRun) pause(calls []openai.ToolCall) error {
	if err := tr.waitSaved(); err != nil {
		return err
	}
	t := tr.t
	pending := pendingOf(calls, t.owner, t.r.o.Now().UTC())
	ctx, cancel := tr.persistCtx()
	defer cancel()
	if _, err := t.r.o.Store.UpdateSessionMetadata(ctx, t.req.Key, map[string]any{store.MetadataPendingApprovals: pending}); err != nil {
		return &userError{msg: saveFailedText, err: fmt.Errorf("store pending approvals of session %s: %w", t.req.Key.ThreadID, err)}
	}
	for _, p := range pending {
		tr.em.emit(Event{Type: EventApprovalRequired, ToolCallID: p.ToolCallID, ToolName: p.ToolName,
			Approval: &ApprovalEvent{Arguments: p.Arguments, Summary: p.Summary}})
	}
	return nil
}

// clearPending removes the session's pending approvals (before the
// decided calls run: a crash then leaves them answered as interrupted,
// never run twice).
func (tr *turnRun) clearPending() error {
	ctx, cancel := tr.persistCtx()
	defer cancel()
	if _, err := tr.t.r.o.Store.UpdateSessionMetadata(ctx, tr.t.req.Key, map[string]any{store.MetadataPendingApprovals: nil}); err != nil {
		return fmt.Errorf("clear pending approvals of session %s: %w", tr.t.req.Key.ThreadID, err)
	}
	return nil
}

// recordPolicy records a policy the request set on the session.
func (tr *turnRun) recordPolicy() {
	t := tr.t
	p := approval.FromValue(t.req.Approval)
	if p == "" || approval.FromValue(t.session.Metadata[approval.MetadataKey]) == p {
		return
	}
	ctx, cancel := tr.persistCtx()
	defer cancel()
	if err := t.createErr(); err != nil {
		return
	}
	if _, err := t.r.o.Store.UpdateSessionMetadata(ctx, t.req.Key, map[string]any{approval.MetadataKey: string(p)}); err != nil {
		t.r.log.ErrorContext(ctx, "record approval policy", "session", t.req.Key.ThreadID, "err", err)
	}
}

// audit appends the lab changes of results to the audit trail (a failure
// is logged: the change happened or not regardless).
func (tr *turnRun) audit(results []toolResult) {
	t := tr.t
	var ctx context.Context
	for _, r := range results {
		if !r.labChange {
			continue
		}
		if ctx == nil {
			c, cancel := tr.persistCtx()
			defer cancel()
			ctx = c
		}
		status := store.AuditSuccess
		switch {
		case r.declined:
			status = store.AuditDeclined
		case r.failed || toolReportedFailure(r.output):
			status = store.AuditFailed
		}
		e := &store.AuditEntry{
			ProjectID: t.req.Key.ProjectID, UserID: t.req.Key.UserID, ThreadID: t.req.Key.ThreadID, TurnID: t.owner,
			Tool: r.call.Function.Name, Arguments: r.call.Function.Arguments,
			Summary: approval.Summary(r.call.Function.Name, r.call.Function.Arguments),
			Status:  status, Decision: r.decision, DecidedBy: r.decidedBy, SnapshotID: tr.snapshotID,
		}
		if err := t.r.o.Store.AppendAudit(ctx, e); err != nil {
			t.r.log.ErrorContext(ctx, "audit lab change", "session", t.req.Key.ThreadID, "tool", e.Tool, "err", err)
		}
	}
}

// toolReportedFailure reads the tools' JSON answer ({"success": false}).
func toolReportedFailure(out string) bool {
	return strings.Contains(out, `"success":false`)
}

// settle answers the calls that awaited a decision: the pending mark is
// cleared first (so that a crash never runs them twice), then the
// approved calls run and the declined ones are answered (Decisions), or
// all are declined (RejectPending); their tool messages are stored and
// audited, and returned.
func (tr *turnRun) settle(ctx context.Context, l *loop) ([]store.Message, error) {
	t := tr.t
	if err := tr.clearPending(); err != nil {
		return nil, err
	}
	var results []toolResult
	if len(t.req.Decisions) > 0 {
		results = l.decide(ctx, t.awaiting, t.req.Decisions, t.req.Key.UserID)
	} else {
		results = declineAll(t.awaiting, t.req.Key.UserID)
		for _, r := range results {
			tr.em.emit(Event{Type: EventToolEnd, ToolName: r.call.Function.Name, ToolCallID: r.call.ID, ToolOutput: r.output})
		}
	}
	msgs := tr.toolMessages(results)
	if err := tr.persist(msgs); err != nil {
		return nil, err
	}
	tr.audit(results)
	return msgs, nil
}
