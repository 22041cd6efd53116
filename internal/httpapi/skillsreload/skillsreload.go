// Package skillsreload serves POST /v3/copilot/reload/skills: an
// administrator makes the process read its skills (the built-in ones and
// SKILLS_DIR) again, as after editing or pulling that directory.
//
// Administrators are the holder of ADMIN_TOKEN (Authorization: Bearer
// <ADMIN_TOKEN>), the local user of single-user mode, and, with GNS3_URL,
// the users GNS3 reports as superadmins (GET /v3/access/users/me with their
// token). Anyone else gets 403 "Only administrators can reload skills".
//
// The skills live in the process: a reload changes what the instance that
// served it offers. Other instances (other Lambda execution environments)
// keep theirs until they start anew (a redeploy or a cold start reloads).
package skillsreload

import (
	"context"
	"errors"
	"net/http"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/skills"
)

// PathReload is the path of the reload route.
const PathReload = "/v3/copilot/reload/skills"

// msgForbidden is the refusal of a caller who is not an administrator, as
// the GNS3 web UI expects it.
const msgForbidden = "Only administrators can reload skills"

// Reloader reloads the skills in use (skills.Registry).
type Reloader interface {
	Reload() (skills.Counts, error)
}

// Superadmins tells whether the user of a GNS3 token is a GNS3 superadmin.
type Superadmins interface {
	IsSuperadmin(ctx context.Context, token string) (bool, error)
}

// GNS3Superadmins asks the GNS3 controller (GET /v3/access/users/me).
type GNS3Superadmins struct{ Client *gns3.Client }

// IsSuperadmin implements Superadmins.
func (g GNS3Superadmins) IsSuperadmin(ctx context.Context, token string) (bool, error) {
	u, err := g.Client.Me(ctx, token)
	if err != nil {
		return false, err
	}
	return u.IsSuperadmin && u.IsActive, nil
}

// Options configure the handler.
type Options struct {
	// Skills are reloaded by the route.
	Skills Reloader
	// AdminToken, when set, is accepted as `Authorization: Bearer <token>`.
	AdminToken string
	// Auth authenticates other callers.
	Auth httpapi.Authenticator
	// Superadmins, when set, lets GNS3 superadmins reload (nil: none is
	// asked).
	Superadmins Superadmins
}

// Handler serves the reload route.
type Handler struct{ o Options }

// New returns the handler of o.
func New(o Options) *Handler { return &Handler{o: o} }

// Routes returns the reload route. It authenticates by itself (the admin
// token is no JWT), so the router lets it through unauthenticated.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{{Method: http.MethodPost, Path: PathReload, Handler: h.reload, Public: true}}
}

// reloadError is the body of a reload that failed: the message, and the
// file at fault when one is.
type reloadError struct {
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
}

func (h *Handler) reload(w http.ResponseWriter, r *http.Request) {
	if err := h.admin(r); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	counts, err := h.o.Skills.Reload()
	var fe *skills.FileError
	switch {
	case errors.As(err, &fe):
		httpapi.Logger(r.Context()).WarnContext(r.Context(), "skills not reloaded", "file", fe.File, "err", fe.Err)
		w.Header().Set("Cache-Control", "no-store")
		httpapi.WriteJSON(w, http.StatusUnprocessableEntity, reloadError{
			Message: "Skills not reloaded, the previous ones stay in use: " + fe.Error(),
			File:    fe.File,
		})
		return
	case err != nil:
		httpapi.Logger(r.Context()).ErrorContext(r.Context(), "skills not reloaded", "err", err)
		httpapi.Fail(w, r, httpapi.Errorf(http.StatusServiceUnavailable, "Skills not reloaded, the previous ones stay in use: %v", err))
		return
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "skills reloaded", "devices", counts.Devices, "topics", counts.Topics, "scenarios", counts.Scenarios)
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, counts)
}

// admin lets an administrator through and refuses anyone else.
func (h *Handler) admin(r *http.Request) error {
	admin, id, err := httpapi.AdminOrCaller(r, h.o.AdminToken, h.o.Auth)
	if err != nil || admin {
		return err
	}
	if id.Via == auth.ViaLocal {
		return nil
	}
	if h.o.Superadmins != nil && id.Token != "" {
		ok, err := h.o.Superadmins.IsSuperadmin(r.Context(), id.Token)
		switch {
		case errors.Is(err, gns3.ErrForbidden):
			return httpapi.Errorf(http.StatusForbidden, msgForbidden)
		case errors.Is(err, gns3.ErrUnauthorized):
			return httpapi.Errorf(http.StatusUnauthorized, "Could not validate credentials")
		case err != nil:
			httpapi.Logger(r.Context()).WarnContext(r.Context(), "superadmin check failed", "user_id", id.UserID, "err", gns3.Describe(err))
			return httpapi.Errorf(http.StatusBadGateway, "Could not check administrator rights with the GNS3 controller")
		case ok:
			return nil
		}
	}
	return httpapi.Errorf(http.StatusForbidden, msgForbidden)
}
