// Package labchanges serves what a person needs to trust the copilot with
// a lab: POST .../sessions/{session_id}/undo, which restores the GNS3
// snapshot taken before the session's last changes, and GET .../audit, the
// trail of lab changes made through the copilot (the caller's own; every
// user's for the holder of ADMIN_TOKEN or a GNS3 superadmin). Both are
// served under /v3/projects/{project_id}/chat and its /v3/copilot alias.
package labchanges

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// Paths of the routes.
const (
	PathUndo  = "/v3/projects/{project_id}/chat/sessions/{session_id}/undo"
	PathAudit = "/v3/projects/{project_id}/chat/audit"
)

// Restorer restores GNS3 project snapshots with the caller's token
// (*gns3.Client is one).
type Restorer interface {
	RestoreSnapshot(ctx context.Context, token, projectID, snapshotID string) (*gns3.Project, error)
}

// Superadmins tells whether the user of a GNS3 token is a GNS3 superadmin
// (skillsreload.GNS3Superadmins is one).
type Superadmins interface {
	IsSuperadmin(ctx context.Context, token string) (bool, error)
}

// Options configure the handlers.
type Options struct {
	// Store holds the sessions and the audit log.
	Store store.Store
	// GNS3 restores snapshots; nil: no controller (undo answers 409).
	GNS3 Restorer
	// Snapshots is config.Snapshots: false (SNAPSHOTS=off) disables undo.
	Snapshots bool
	// AdminToken, when set, lets `Authorization: Bearer <token>` read
	// every user's audit entries.
	AdminToken string
	// Auth authenticates the audit route's callers (the route
	// authenticates by itself, since the admin token is no JWT).
	Auth httpapi.Authenticator
	// Projects checks the project of an audit request that is not the
	// admin's (nil: every project counts as opened).
	Projects httpapi.ProjectChecker
	// Superadmins, when set, lets GNS3 superadmins read every user's
	// audit entries.
	Superadmins Superadmins
	// LeaseTTL bounds how long an undo holds the session (0: 2 minutes).
	LeaseTTL time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger receives handler logs (nil: the request logger).
	Logger *slog.Logger
}

// Handlers serve the undo and audit routes.
type Handlers struct{ o Options }

// New returns the handlers of o.
func New(o Options) *Handlers {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handlers{o: o}
}

// Routes returns the undo route (authenticated, project checked) and the
// audit route (Public: it authenticates by itself).
func (h *Handlers) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodPost, Path: PathUndo, Handler: httpapi.HandlerFunc(h.undo).ServeHTTP, Project: true},
		{Method: http.MethodGet, Path: PathAudit, Handler: httpapi.HandlerFunc(h.audit).ServeHTTP, Public: true},
	}
}

// newOwner is a lease owner for one undo.
func newOwner() string { return "undo-" + uuid.NewString() }
