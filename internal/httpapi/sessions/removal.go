package sessions

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// GoneChecker reports whether a project no longer exists on the controller.
type GoneChecker interface {
	ProjectGone(ctx context.Context, id auth.Identity, projectID string) (bool, error)
}

// RemovalPolicy allows removing a project's chat to the holder of the admin
// token, to the local user in single-user mode, and to an authenticated user
// when the GNS3 controller reports the project gone.
type RemovalPolicy struct {
	// AdminToken, when set, is accepted as `Authorization: Bearer <token>`.
	AdminToken string
	// Auth authenticates ordinary callers.
	Auth httpapi.Authenticator
	// Projects tells whether the project is gone; nil means no controller
	// is configured, so only the admin and the local user may remove.
	Projects GoneChecker
}

// AuthorizeRemoval implements RemovalAuthorizer.
func (p RemovalPolicy) AuthorizeRemoval(r *http.Request, projectID string) error {
	admin, id, err := httpapi.AdminOrCaller(r, p.AdminToken, p.Auth)
	if err != nil || admin {
		return err
	}
	if id.Via == auth.ViaLocal {
		return nil
	}
	if p.Projects == nil {
		return httpapi.Errorf(http.StatusForbidden, "Only an administrator may remove a project's chat")
	}
	gone, err := p.Projects.ProjectGone(r.Context(), id, projectID)
	if err != nil {
		if se, ok := httpapi.RefusalOf(err); ok {
			return se
		}
		return fmt.Errorf("check project %s is gone: %w", projectID, err)
	}
	if !gone {
		return httpapi.Errorf(http.StatusConflict, "Project '%s' still exists; delete the project first", projectID)
	}
	return nil
}

// BackgroundRemover removes a project's chat, answering done when it
// finishes within Wait and otherwise letting it finish in the background
// (the removal is resumable, so a cut-off run is finished by the next).
type BackgroundRemover struct {
	Store  store.Sessions
	Logger *slog.Logger
	// Wait is how long the request waits; 0 means 5 seconds.
	Wait time.Duration
}

// RemoveProject implements ProjectRemover.
func (b BackgroundRemover) RemoveProject(ctx context.Context, projectID string) (bool, error) {
	wait := b.Wait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	done := make(chan error, 1)
	go func() { done <- b.Store.DeleteProject(context.WithoutCancel(ctx), projectID) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		return err == nil, err
	case <-t.C:
		go func() {
			if err := <-done; err != nil && b.Logger != nil {
				b.Logger.Error("background project removal failed", "project_id", projectID, "err", err)
			}
		}()
		return false, nil
	}
}
