package gns3test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// User is a user of the fake controller.
type User struct {
	// UserID is the user's UUID (AddUser makes one when empty).
	UserID string
	// Username is what GNS3 tokens carry as their sub.
	Username string
	Email    string
	FullName string
	// Superadmin users have every privilege.
	Superadmin bool
	// Inactive users are refused (401), as GNS3 refuses them.
	Inactive bool
	// Privileges are the privileges the user holds on every path (an ACE
	// on "/"), for example "Group.Audit" (needed to list a user's groups).
	Privileges []string
	// ACL are the privileges the user holds on a path and below it (GNS3
	// ACEs with propagate, the paths without the /v3 prefix), for example
	// {"/access/groups/<id>": {"Group.Modify"}}. See HasPrivilege.
	ACL map[string][]string
}

// Group is a user group of the fake controller.
type Group struct {
	ID      string
	Name    string
	Builtin bool
	Members []string // usernames
}

// fixedTime is the creation time of every fake user and group.
const fixedTime = "2025-01-01T00:00:00Z"

// AddUser adds (or replaces, by username) a user and returns it with its
// UserID filled in. A request's bearer token names its user through
// BindToken, or else as a GNS3 JWT does: by the username in its sub claim
// (the signature is not checked).
func (s *Server) AddUser(u User) User {
	if u.UserID == "" {
		u.UserID = uuid.NewString()
	}
	u.Privileges = slices.Clone(u.Privileges)
	acl := make(map[string][]string, len(u.ACL))
	for p, privs := range u.ACL {
		acl[p] = slices.Clone(privs)
	}
	u.ACL = acl
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := u
	s.users[u.Username] = &cp
	return u
}

// BindToken makes token authenticate as username (a user added with
// AddUser), whatever the token's content.
func (s *Server) BindToken(token, username string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = username
}

// AddGroup adds a user group named name with the given members
// (usernames) and returns its id.
func (s *Server) AddGroup(name string, members ...string) string {
	id := uuid.NewString()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = &Group{ID: id, Name: name, Members: slices.Clone(members)}
	s.groupOrder = append(s.groupOrder, id)
	return id
}

// AddMember adds username to the group groupID.
func (s *Server) AddMember(groupID, username string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[groupID]; ok && !slices.Contains(g.Members, username) {
		g.Members = append(g.Members, username)
	}
}

// accessPrivilege is the privilege of a route under /v3/access (parts
// after "access").
func accessPrivilege(method string, parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	switch parts[0] {
	case "users":
		switch {
		case len(parts) == 2 && (parts[1] == "me" || parts[1] == "login" || parts[1] == "authenticate" || parts[1] == "logout"):
			return ""
		case len(parts) == 3 && parts[2] == "groups":
			return "Group.Audit"
		case method == http.MethodGet:
			return "User.Audit"
		case method == http.MethodPut:
			return "User.Modify"
		}
		return "User.Allocate"
	case "groups":
		switch method {
		case http.MethodGet:
			return "Group.Audit"
		case http.MethodPut:
			return "Group.Modify"
		}
		return "Group.Allocate"
	}
	return ""
}

// bearer returns the request's bearer token.
func bearer(r *http.Request) string {
	if scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(cred)
	}
	return ""
}

// jwtSubject returns the sub claim of a JWT, unverified ("" if none).
func jwtSubject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return ""
	}
	return claims.Sub
}

// caller returns the user of the request's token, or answers 401 as GNS3
// does. Call with s.mu held.
func (s *Server) caller(w http.ResponseWriter, r *http.Request) (*User, bool) {
	tok := bearer(r)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Not authenticated"})
		return nil, false
	}
	name, ok := s.tokens[tok]
	if !ok {
		name = jwtSubject(tok)
	}
	u, ok := s.users[name]
	if !ok || name == "" {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Could not validate credentials"})
		return nil, false
	}
	if u.Inactive && !u.Superadmin {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Not an active user"})
		return nil, false
	}
	return u, true
}

func userJSON(u *User) map[string]any {
	var email, fullName any
	if u.Email != "" {
		email = u.Email
	}
	if u.FullName != "" {
		fullName = u.FullName
	}
	return map[string]any{
		"username":      u.Username,
		"is_active":     !u.Inactive,
		"email":         email,
		"full_name":     fullName,
		"user_id":       u.UserID,
		"last_login":    time.Now().UTC().Format(time.RFC3339),
		"is_superadmin": u.Superadmin,
		"created_at":    fixedTime,
		"updated_at":    fixedTime,
	}
}

// getMe serves GET /v3/access/users/me: the user of the bearer token.
func (s *Server) getMe(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.caller(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, userJSON(u))
}

// getUserGroups serves GET /v3/access/users/{user_id}/groups, which GNS3
// allows to superadmins and to holders of Group.Audit.
func (s *Server) getUserGroups(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("user_id")
	if !validID(w, "user_id", id) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.caller(w, r)
	if !ok {
		return
	}
	if !denyUnless(w, u, r, "Group.Audit") {
		return
	}
	var member string
	for _, x := range s.users {
		if strings.EqualFold(x.UserID, id) {
			member = x.Username
		}
	}
	out := []map[string]any{}
	for _, gid := range s.groupOrder {
		g := s.groups[gid]
		if member != "" && slices.Contains(g.Members, member) {
			out = append(out, map[string]any{
				"name": g.Name, "user_group_id": g.ID, "is_builtin": g.Builtin,
				"created_at": fixedTime, "updated_at": fixedTime,
			})
		}
	}
	writeJSON(w, http.StatusOK, out)
}
