package labchanges

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// Bounds of the audit listing.
const (
	defaultAuditLimit = 50
	maxAuditLimit     = 500
)

// AuditEntry is one entry of GET .../audit.
type AuditEntry struct {
	ID         string          `json:"id"`
	Time       string          `json:"time"`
	UserID     string          `json:"user_id"`
	SessionID  string          `json:"session_id,omitempty"`
	TurnID     string          `json:"turn_id,omitempty"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Summary    string          `json:"summary"`
	Status     string          `json:"status"`
	Decision   string          `json:"decision,omitempty"`
	DecidedBy  string          `json:"decided_by,omitempty"`
	SnapshotID string          `json:"snapshot_id,omitempty"`
}

// AuditPage is the body of GET .../audit.
type AuditPage struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor string       `json:"next_cursor,omitempty"`
	// All is true when the caller sees every user's entries.
	All bool `json:"all_users"`
}

func (h *Handlers) audit(w http.ResponseWriter, r *http.Request) error {
	pid := r.PathValue("project_id")
	if err := httpapi.ValidateProjectID(pid); err != nil {
		return err
	}
	limit := defaultAuditLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			return httpapi.Errorf(http.StatusUnprocessableEntity, "Query parameter 'limit' must be a whole number from 1 to 500")
		}
		limit = n
	}
	user, all, err := h.auditCaller(r, pid)
	if err != nil {
		return err
	}
	if all {
		user = ""
	}
	entries, next, err := h.o.Store.ListAudit(r.Context(), pid, user, store.Page{Limit: limit, Cursor: r.URL.Query().Get("cursor")})
	if errors.Is(err, store.ErrInvalidCursor) {
		return httpapi.Errorf(http.StatusUnprocessableEntity, "Invalid cursor")
	}
	if err != nil {
		return err
	}
	out := AuditPage{Entries: make([]AuditEntry, 0, len(entries)), NextCursor: next, All: all}
	for _, e := range entries {
		args := json.RawMessage(e.Arguments)
		if !json.Valid(args) {
			args, _ = json.Marshal(e.Arguments) // kept as a string
		}
		out.Entries = append(out.Entries, AuditEntry{
			ID: e.ID, Time: timeText(e.Time), UserID: e.UserID, SessionID: e.ThreadID, TurnID: e.TurnID, Tool: e.Tool,
			Arguments: args, Summary: e.Summary, Status: e.Status, Decision: e.Decision, DecidedBy: e.DecidedBy,
			SnapshotID: e.SnapshotID,
		})
	}
	if next != "" {
		w.Header().Set("X-Next-Cursor", next)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// auditCaller authenticates the caller: the admin token sees every
// user's entries; anyone else must be allowed in the project, and sees
// every user's entries only when GNS3 reports a superadmin.
func (h *Handlers) auditCaller(r *http.Request, projectID string) (user string, all bool, err error) {
	admin, id, err := httpapi.AdminOrCaller(r, h.o.AdminToken, h.o.Auth)
	if err != nil {
		return "", false, err
	}
	if admin {
		return "", true, nil
	}
	if h.o.Projects != nil {
		if err := h.o.Projects.CheckProject(r.Context(), id, projectID); err != nil {
			if se, ok := httpapi.RefusalOf(err); ok {
				return "", false, se
			}
			return "", false, err
		}
	}
	if h.o.Superadmins != nil && id.Token != "" && id.Via != auth.ViaLocal {
		ok, err := h.o.Superadmins.IsSuperadmin(r.Context(), id.Token)
		if err != nil && !errors.Is(err, gns3.ErrForbidden) {
			httpapi.Logger(r.Context()).WarnContext(r.Context(), "audit: superadmin check failed", "user_id", id.UserID, "err", gns3.Describe(err))
		}
		if err == nil && ok {
			return id.UserID, true, nil
		}
	}
	return id.UserID, false, nil
}
