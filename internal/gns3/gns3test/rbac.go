package gns3test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// HasPrivilege reports whether u holds privilege on path (a GNS3 resource
// path without the /v3 prefix, such as "/access/groups/<id>/llm-model-configs"),
// as GNS3 v3 decides it: superadmins hold every privilege; otherwise an
// ACE of the user on the path or on one of its parents ("/access/groups/<id>",
// "/access/groups", "/access", "/") grants it. Privileges count as an ACE
// on "/". The fake has no deny ACEs, no non-propagating ACEs and no group
// ACEs.
func HasPrivilege(u User, path, privilege string) bool {
	if u.Superadmin {
		return true
	}
	if slices.Contains(u.Privileges, privilege) {
		return true
	}
	parts := strings.Split(strings.TrimRight(path, "/"), "/")
	for i := len(parts); i > 0; i-- {
		p := strings.Join(parts[:i], "/")
		if p == "" {
			p = "/"
		}
		if slices.Contains(u.ACL[p], privilege) {
			return true
		}
	}
	return false
}

// denyUnless answers GNS3's 403 unless u holds privilege on the request's
// path (without /v3); it reports whether the request may go on.
func denyUnless(w http.ResponseWriter, u *User, r *http.Request, privilege string) bool {
	if HasPrivilege(*u, strings.TrimPrefix(r.URL.Path, "/v3"), privilege) {
		return true
	}
	writeJSON(w, http.StatusForbidden, map[string]any{"message": fmt.Sprintf("Permission denied (privilege %s is required)", privilege)})
	return false
}

// registerAccessRoutes serves the users and groups of the fake by id:
// GET and PUT /v3/access/users/{user_id} (User.Audit, User.Modify) and
// /v3/access/groups/{group_id} (Group.Audit, Group.Modify), checked in
// GNS3's order: the token (401), the privilege on the path (403), the
// path id and the body (422), then the resource (404). A PUT changes
// nothing in the fake: a JSON object answers the resource as it is.
func (s *Server) registerAccessRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v3/access/users/{user_id}", s.accessRoute("User.Audit", "user_id", s.userByID))
	mux.HandleFunc("PUT /v3/access/users/{user_id}", s.accessRoute("User.Modify", "user_id", s.userByID))
	mux.HandleFunc("GET /v3/access/groups/{group_id}", s.accessRoute("Group.Audit", "group_id", s.groupByID))
	mux.HandleFunc("PUT /v3/access/groups/{group_id}", s.accessRoute("Group.Modify", "group_id", s.groupByID))
}

// accessRoute serves one of the routes of registerAccessRoutes; find
// returns the JSON of the resource id, or its 404 message. Call find with
// s.mu held.
func (s *Server) accessRoute(privilege, param string, find func(id string) (map[string]any, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.mu.Lock()
		defer s.mu.Unlock()
		u, ok := s.caller(w, r)
		if !ok || !denyUnless(w, u, r, privilege) {
			return
		}
		id := r.PathValue(param)
		if !validID(w, param, id) {
			return
		}
		if r.Method == http.MethodPut {
			var obj map[string]any
			if json.Unmarshal(body, &obj) != nil || obj == nil {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
					"message": "1 validation error for Request\nbody\n  Input should be a valid dictionary or object to extract fields from",
				})
				return
			}
		}
		v, missing := find(strings.ToLower(id))
		if v == nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": missing})
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// userByID returns the user id. Call with s.mu held.
func (s *Server) userByID(id string) (map[string]any, string) {
	for _, u := range s.users {
		if strings.EqualFold(u.UserID, id) {
			return userJSON(u), ""
		}
	}
	return nil, fmt.Sprintf("User '%s' not found", id)
}

// groupByID returns the group id. Call with s.mu held.
func (s *Server) groupByID(id string) (map[string]any, string) {
	if g, ok := s.groups[id]; ok {
		return map[string]any{"name": g.Name, "user_group_id": g.ID, "is_builtin": g.Builtin,
			"created_at": fixedTime, "updated_at": fixedTime}, ""
	}
	return nil, fmt.Sprintf("User group '%s' not found", id)
}
