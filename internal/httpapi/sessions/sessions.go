// Package sessions serves the session routes of the project chat: list,
// history, rename, delete, pin, unpin and abort (which stops a running
// turn on any instance through the store's abort flag), and the removal of
// every session of a project.
package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"agentchat/internal/agents/catalog"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// Route paths, relative to the project chat prefix.
const (
	prefix         = "/v3/projects/{project_id}/chat"
	PathList       = prefix + "/sessions"
	PathHistory    = prefix + "/sessions/{session_id}/history"
	PathSession    = prefix + "/sessions/{session_id}"
	PathPin        = prefix + "/sessions/{session_id}/pin"
	PathAbort      = prefix + "/sessions/{session_id}/abort"
	PathProject    = prefix
	maxTitleLength = 255
	// defaultLimit is the list without a limit: the GNS3 web UI never
	// pages, and the upstream copilot answers 100.
	defaultLimit   = 100
	defaultHistory = 100
	maxLimit       = 1000
)

// ProjectRemover removes every session of a project. It reports done=false
// when the removal continues in the background.
type ProjectRemover interface {
	RemoveProject(ctx context.Context, projectID string) (done bool, err error)
}

// RemovalAuthorizer decides whether the caller of r may remove a project's
// chat; the route is public, so it authenticates the caller itself.
type RemovalAuthorizer interface {
	AuthorizeRemoval(r *http.Request, projectID string) error
}

// Handlers serves the session routes.
type Handlers struct {
	store   store.Store
	remover ProjectRemover
	authz   RemovalAuthorizer
}

// New returns the session handlers over st. remover and authz serve
// project removal; nil remover removes synchronously through the store, nil
// authz refuses every removal.
func New(st store.Store, remover ProjectRemover, authz RemovalAuthorizer) *Handlers {
	if remover == nil {
		remover = syncRemover{st}
	}
	return &Handlers{store: st, remover: remover, authz: authz}
}

// Routes returns the session routes.
func (h *Handlers) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathList, Handler: httpapi.HandlerFunc(h.list).ServeHTTP, Project: true},
		{Method: http.MethodGet, Path: PathHistory, Handler: httpapi.HandlerFunc(h.history).ServeHTTP, Project: true},
		{Method: http.MethodPatch, Path: PathSession, Handler: httpapi.HandlerFunc(h.rename).ServeHTTP, Project: true},
		{Method: http.MethodDelete, Path: PathSession, Handler: httpapi.HandlerFunc(h.delete).ServeHTTP, Project: true},
		{Method: http.MethodPut, Path: PathPin, Handler: httpapi.HandlerFunc(h.pin).ServeHTTP, Project: true},
		{Method: http.MethodDelete, Path: PathPin, Handler: httpapi.HandlerFunc(h.unpin).ServeHTTP, Project: true},
		{Method: http.MethodPost, Path: PathAbort, Handler: httpapi.HandlerFunc(h.abort).ServeHTTP, Project: true},
	}
}

// RemovalRoutes returns the project removal route. It does not require the
// project to be opened (it is called when a project is gone) and it
// authenticates through the RemovalAuthorizer, which also accepts the
// admin token.
func (h *Handlers) RemovalRoutes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodDelete, Path: PathProject, Handler: httpapi.HandlerFunc(h.removeProject).ServeHTTP, Public: true},
	}
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) error {
	id, _ := auth.FromContext(r.Context())
	limit, err := ParseLimit(r, "limit", defaultLimit)
	if err != nil {
		return err
	}
	cursor := r.URL.Query().Get("cursor")
	if len(cursor) > 1024 {
		return httpapi.Errorf(http.StatusUnprocessableEntity, "Invalid cursor")
	}
	mode, err := ParseCopilotMode(r)
	if err != nil {
		return err
	}
	page := store.Page{Limit: limit, Cursor: cursor, CopilotMode: mode}
	list, next, err := h.store.ListSessions(r.Context(), r.PathValue("project_id"), id.UserID, page)
	if errors.Is(err, store.ErrInvalidCursor) {
		return httpapi.Errorf(http.StatusUnprocessableEntity, "Invalid cursor")
	}
	if err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	out := make([]ChatSession, 0, len(list))
	for i := range list {
		out = append(out, SessionView(&list[i]))
	}
	if next != "" {
		w.Header().Set(HeaderNextCursor, next)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// RenameRequest is the body of PATCH /sessions/{session_id}.
type RenameRequest struct {
	Title *string `json:"title"`
}

// ValidateTitle trims title and checks it is 1..255 characters.
func ValidateTitle(title *string) (string, error) {
	if title == nil {
		return "", httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'title' is required")
	}
	t := strings.TrimSpace(*title)
	switch n := utf8.RuneCountInString(t); {
	case n == 0:
		return "", httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'title' must not be blank")
	case n > maxTitleLength:
		return "", httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'title' must be at most %d characters (got %d)", maxTitleLength, n)
	case strings.ContainsFunc(t, func(r rune) bool { return r < 0x20 && r != '\t' }):
		return "", httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'title' must not contain control characters")
	}
	return t, nil
}

func (h *Handlers) rename(w http.ResponseWriter, r *http.Request) error {
	k, err := httpapi.SessionKey(r)
	if err != nil {
		return err
	}
	var body RenameRequest
	if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return err
	}
	title, err := ValidateTitle(body.Title)
	if err != nil {
		return err
	}
	s, err := h.store.RenameSession(r.Context(), k, title)
	if err != nil {
		return storeError(k, err)
	}
	httpapi.WriteJSON(w, http.StatusOK, SessionView(s))
	return nil
}

func (h *Handlers) delete(w http.ResponseWriter, r *http.Request) error {
	k, err := httpapi.SessionKey(r)
	if err != nil {
		return err
	}
	if err := h.store.DeleteSession(r.Context(), k); err != nil {
		return storeError(k, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handlers) pin(w http.ResponseWriter, r *http.Request) error {
	return h.setPinned(w, r, true)
}

func (h *Handlers) unpin(w http.ResponseWriter, r *http.Request) error {
	return h.setPinned(w, r, false)
}

func (h *Handlers) setPinned(w http.ResponseWriter, r *http.Request, pinned bool) error {
	k, err := httpapi.SessionKey(r)
	if err != nil {
		return err
	}
	s, err := h.store.SetPinned(r.Context(), k, pinned)
	if err != nil {
		return storeError(k, err)
	}
	httpapi.WriteJSON(w, http.StatusOK, SessionView(s))
	return nil
}

// abort sets the session's abort flag: the running turn, on whatever
// instance, stops at its next safe point and ends its stream with done.
func (h *Handlers) abort(w http.ResponseWriter, r *http.Request) error {
	k, err := httpapi.SessionKey(r)
	if err != nil {
		return err
	}
	if err := h.store.RequestAbort(r.Context(), k); err != nil {
		return storeError(k, err)
	}
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]string{"message": "Abort requested", "session_id": k.ThreadID})
	return nil
}

func (h *Handlers) removeProject(w http.ResponseWriter, r *http.Request) error {
	pid := r.PathValue("project_id")
	if err := httpapi.ValidateProjectID(pid); err != nil {
		return err
	}
	if h.authz == nil {
		return httpapi.Errorf(http.StatusForbidden, "Project chat removal is not allowed")
	}
	if err := h.authz.AuthorizeRemoval(r, pid); err != nil {
		return err
	}
	done, err := h.remover.RemoveProject(r.Context(), pid)
	if err != nil {
		return fmt.Errorf("remove project %s: %w", pid, err)
	}
	if !done {
		httpapi.WriteJSON(w, http.StatusAccepted, map[string]string{"message": "Project chat removal started", "project_id": pid})
		return nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type syncRemover struct{ store store.Sessions }

func (s syncRemover) RemoveProject(ctx context.Context, projectID string) (bool, error) {
	if err := s.store.DeleteProject(ctx, projectID); err != nil {
		return false, err
	}
	return true, nil
}

// ParseCopilotMode reads the copilot_mode query parameter of the listing:
// "" (no filter) when it is absent or blank, else one of
// catalog.AllCopilotModes (with the mode of the sessions POST
// .../chat/inject creates; case and surrounding spaces are ignored, as
// for the copilot_mode of a chat request); anything else is a 422.
func ParseCopilotMode(r *http.Request) (string, error) {
	m := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("copilot_mode")))
	modes := catalog.AllCopilotModes()
	if m == "" || slices.Contains(modes, m) {
		return m, nil
	}
	return "", httpapi.Errorf(http.StatusUnprocessableEntity, "Query parameter 'copilot_mode' must be one of: %s", strings.Join(modes, ", "))
}

// ParseLimit reads an integer query parameter in 1..1000.
func ParseLimit(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		return 0, httpapi.Errorf(http.StatusUnprocessableEntity, "Query parameter '%s' must be an integer between 1 and %d", name, maxLimit)
	}
	return n, nil
}

// storeError is the answer to a store error about the session k: 404
// when it does not exist, else the error wrapped (a 500).
func storeError(k store.Key, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "Session '%s' not found", k.ThreadID)
	}
	return fmt.Errorf("session %s: %w", k.ThreadID, err)
}
