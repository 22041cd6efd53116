package labchanges

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// ToolUndo is the tool name of the audit entry of an undo.
const ToolUndo = "undo_gns3_snapshot"

// UndoResult is the answer of a successful undo.
type UndoResult struct {
	Message    string `json:"message"`
	SessionID  string `json:"session_id"`
	SnapshotID string `json:"snapshot_id"`
	Name       string `json:"name"`
	TakenAt    string `json:"taken_at"`
	RestoredAt string `json:"restored_at"`
}

// timeText is the project chat's time format (UTC with a numeric offset).
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000-07:00") }

func (h *Handlers) undo(w http.ResponseWriter, r *http.Request) error {
	k, err := httpapi.SessionKey(r)
	if err != nil {
		return err
	}
	if !h.o.Snapshots {
		return httpapi.Errorf(http.StatusForbidden, "Undo is disabled on this server (SNAPSHOTS=off)")
	}
	if h.o.GNS3 == nil {
		return httpapi.Errorf(http.StatusConflict, "GNS3 is not configured: there is no snapshot to restore")
	}
	ctx := r.Context()
	sess, err := h.o.Store.GetSession(ctx, k)
	if err != nil {
		return sessionError(k, err)
	}
	snap := sess.LastSnapshot()
	if snap == nil {
		return httpapi.Errorf(http.StatusNotFound, "No snapshot to restore: the copilot has not changed the lab in this session")
	}
	// No turn may run while the lab is put back.
	owner := newOwner()
	if err := h.o.Store.AcquireLease(ctx, k, owner, h.o.LeaseTTL); err != nil {
		return sessionError(k, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = h.o.Store.ReleaseLease(rctx, k, owner)
	}()
	id, _ := auth.FromContext(ctx)
	_, rerr := h.o.GNS3.RestoreSnapshot(ctx, id.Token, k.ProjectID, snap.SnapshotID)
	h.auditUndo(ctx, k, snap, rerr)
	if rerr != nil {
		return restoreError(r, snap, rerr)
	}
	now := h.o.Now().UTC()
	snap.RestoredAt = now
	if _, err := h.o.Store.UpdateSessionMetadata(context.WithoutCancel(ctx), k, map[string]any{store.MetadataLastSnapshot: snap}); err != nil {
		httpapi.Logger(ctx).WarnContext(ctx, "undo: restore not recorded on the session", "session_id", k.ThreadID, "err", err)
	}
	httpapi.WriteJSON(w, http.StatusOK, UndoResult{
		Message:    fmt.Sprintf("Restored the snapshot %q: the topology and the saved device configurations are back as they were; running configurations that were never saved are not.", snap.Name),
		SessionID:  k.ThreadID,
		SnapshotID: snap.SnapshotID,
		Name:       snap.Name,
		TakenAt:    timeText(snap.TakenAt),
		RestoredAt: timeText(now),
	})
	return nil
}

// auditUndo records the undo in the audit log (a failure is logged: the
// restore has happened or not regardless).
func (h *Handlers) auditUndo(ctx context.Context, k store.Key, snap *store.SnapshotRecord, rerr error) {
	args, _ := json.Marshal(map[string]string{"snapshot_id": snap.SnapshotID, "name": snap.Name})
	e := &store.AuditEntry{
		ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Tool: ToolUndo, Arguments: string(args),
		Status: store.AuditSuccess, Decision: store.DecisionNotRequired,
		DecidedBy: k.UserID, SnapshotID: snap.SnapshotID,
	}
	e.Summary = "restore snapshot " + snap.Name
	if rerr != nil {
		e.Status = store.AuditFailed
	}
	if err := h.o.Store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		httpapi.Logger(ctx).WarnContext(ctx, "undo not audited", "session_id", k.ThreadID, "err", err)
	}
}

// restoreError turns a GNS3 failure into the answer to the user.
func restoreError(r *http.Request, snap *store.SnapshotRecord, err error) error {
	switch {
	case errors.Is(err, gns3.ErrForbidden):
		return httpapi.Errorf(http.StatusForbidden, "You lack the GNS3 permission to restore snapshots (Snapshot.Restore)")
	case errors.Is(err, gns3.ErrUnauthorized):
		return httpapi.Errorf(http.StatusUnauthorized, "GNS3 did not accept your credentials")
	case errors.Is(err, gns3.ErrProjectNotFound):
		return httpapi.Errorf(http.StatusNotFound, "The project no longer exists in GNS3")
	case errors.Is(err, gns3.ErrNotFound):
		return httpapi.Errorf(http.StatusNotFound, "The snapshot %q no longer exists in GNS3", snap.Name)
	}
	httpapi.Logger(r.Context()).WarnContext(r.Context(), "undo: restore failed", "err", gns3.Describe(err))
	return httpapi.Errorf(http.StatusBadGateway, "GNS3 could not restore the snapshot: %s", gns3.Describe(err))
}

// sessionError is the answer to a store error about the session k: 404
// when it does not exist, 409 while a turn holds it, else the error
// wrapped (a 500).
func sessionError(k store.Key, err error) error {
	var held *store.LeaseHeldError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return httpapi.Errorf(http.StatusNotFound, "Session '%s' not found", k.ThreadID)
	case errors.As(err, &held):
		return &httpapi.StatusError{Status: http.StatusConflict,
			Message:    "A turn is running on this session; undo once it has finished",
			RetryAfter: held.RetryAfter(time.Now())}
	case errors.Is(err, store.ErrLeaseHeld):
		return httpapi.Errorf(http.StatusConflict, "A turn is running on this session; undo once it has finished")
	}
	return fmt.Errorf("session %s: %w", k.ThreadID, err)
}
