package httpapi

import (
	"net/http"

	"agentchat/internal/auth"
	"agentchat/internal/store"
)

// SessionKey returns the key of the session a project route names
// ({project_id} and {session_id}), for the authenticated user, after
// validating the session id (the router validates {project_id} on
// project routes).
func SessionKey(r *http.Request) (store.Key, error) {
	id, ok := auth.FromContext(r.Context())
	if !ok {
		return store.Key{}, Errorf(http.StatusUnauthorized, "Not authenticated")
	}
	sid := r.PathValue("session_id")
	if err := ValidateUUID("session_id", sid); err != nil {
		return store.Key{}, err
	}
	return store.Key{ProjectID: r.PathValue("project_id"), UserID: id.UserID, ThreadID: NormalizeUUID(sid)}, nil
}
