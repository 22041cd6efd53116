package agent

import (
	"context"
	"encoding/json"

	"agentchat/internal/approval"
	"agentchat/internal/store"
)

// auditRecorder is the recorder of a stateless run (the /v1 gateway):
// nothing of the conversation is stored, but the lab changes its tools
// make are audited, in the project each call named (project_id).
type auditRecorder struct {
	noRecorder
	rt     *Runtime
	userID string
	runID  string
}

// tools implements recorder.
func (a auditRecorder) tools(results []toolResult) error {
	for _, r := range results {
		if !r.labChange {
			continue
		}
		var args struct {
			ProjectID string `json:"project_id"`
		}
		if json.Unmarshal([]byte(r.call.Function.Arguments), &args) != nil || args.ProjectID == "" {
			continue
		}
		status := store.AuditSuccess
		if r.failed || toolReportedFailure(r.output) {
			status = store.AuditFailed
		}
		e := &store.AuditEntry{ProjectID: args.ProjectID, UserID: a.userID, TurnID: a.runID, Tool: r.call.Function.Name,
			Arguments: r.call.Function.Arguments, Summary: approval.Summary(r.call.Function.Name, r.call.Function.Arguments),
			Status: status, Decision: r.decision}
		ctx, cancel := context.WithTimeout(context.Background(), persistTimeout)
		if err := a.rt.o.Store.AppendAudit(ctx, e); err != nil {
			a.rt.log.ErrorContext(ctx, "audit lab change", "tool", e.Tool, "err", err)
		}
		cancel()
	}
	return nil
}
