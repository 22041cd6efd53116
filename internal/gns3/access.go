package gns3

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// User is a GNS3 v3 user (GET /v3/access/users/me). GNS3 tokens carry the
// username as their sub; UserID is the UUID the web UI puts in paths.
type User struct {
	UserID       string `json:"user_id"`
	Username     string `json:"username"`
	Email        string `json:"email,omitempty"`
	FullName     string `json:"full_name,omitempty"`
	IsActive     bool   `json:"is_active"`
	IsSuperadmin bool   `json:"is_superadmin"`
	LastLogin    string `json:"last_login,omitempty"`
	CreatedAt    string `json:"created_at,omitempty"`
	UpdatedAt    string `json:"updated_at,omitempty"`
}

// UserGroup is a GNS3 v3 user group (GET /v3/access/users/{id}/groups).
type UserGroup struct {
	UserGroupID string `json:"user_group_id"`
	Name        string `json:"name"`
	IsBuiltin   bool   `json:"is_builtin"`
	CreatedAt   string `json:"created_at,omitempty"`
	UpdatedAt   string `json:"updated_at,omitempty"`
}

// Me returns the user the token belongs to (GET /v3/access/users/me, which
// needs no privilege). A token GNS3 does not accept matches ErrUnauthorized.
func (c *Client) Me(ctx context.Context, token string) (*User, error) {
	var out User
	if err := c.Do(ctx, token, http.MethodGet, "/v3/access/users/me", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UserGroups returns the groups userID is a member of
// (GET /v3/access/users/{user_id}/groups). GNS3 requires the Group.Audit
// privilege there (superadmins have it): without it the call fails with a
// *StatusError matching ErrForbidden. userID must be a UUID (ErrInvalidID,
// no request sent).
func (c *Client) UserGroups(ctx context.Context, token, userID string) ([]UserGroup, error) {
	if !ValidID(userID) {
		return nil, &invalidIDError{kind: "user", id: shorten(userID)}
	}
	out := []UserGroup{}
	if err := c.Do(ctx, token, http.MethodGet, "/v3/access/users/"+userID+"/groups", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Group returns the user group groupID (GET /v3/access/groups/{group_id}).
// GNS3 answers it to holders of the Group.Audit privilege on that group
// (an ACE on /access/groups/{group_id}, /access/groups, /access or /,
// held by the user or one of their groups; superadmins hold every
// privilege): without it the call fails with a *StatusError matching
// ErrForbidden; a group GNS3 does not have matches ErrNotFound. groupID
// must be a UUID (ErrInvalidID, no request sent).
func (c *Client) Group(ctx context.Context, token, groupID string) (*UserGroup, error) {
	if !ValidID(groupID) {
		return nil, &invalidIDError{kind: "group", id: shorten(groupID)}
	}
	var out UserGroup
	if err := c.Do(ctx, token, http.MethodGet, "/v3/access/groups/"+groupID, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// User returns the user userID (GET /v3/access/users/{user_id}), which
// GNS3 answers to holders of the User.Audit privilege on that user (see
// Group for how GNS3 decides): without it the call fails with a
// *StatusError matching ErrForbidden; a user GNS3 does not have matches
// ErrNotFound. userID must be a UUID (ErrInvalidID, no request sent).
func (c *Client) User(ctx context.Context, token, userID string) (*User, error) {
	if !ValidID(userID) {
		return nil, &invalidIDError{kind: "user", id: shorten(userID)}
	}
	var out User
	if err := c.Do(ctx, token, http.MethodGet, "/v3/access/users/"+userID, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CanModifyGroup reports whether the token's user holds the Group.Modify
// privilege on the group groupID, as GNS3 decides it for its routes under
// /v3/access/groups/{group_id}. See probeModify for how it asks without
// changing anything.
func (c *Client) CanModifyGroup(ctx context.Context, token, groupID string) (bool, error) {
	if !ValidID(groupID) {
		return false, &invalidIDError{kind: "group", id: shorten(groupID)}
	}
	return c.probeModify(ctx, token, "/v3/access/groups/"+groupID)
}

// CanModifyUser reports whether the token's user holds the User.Modify
// privilege on the user userID (see CanModifyGroup).
func (c *Client) CanModifyUser(ctx context.Context, token, userID string) (bool, error) {
	if !ValidID(userID) {
		return false, &invalidIDError{kind: "user", id: shorten(userID)}
	}
	return c.probeModify(ctx, token, "/v3/access/users/"+userID)
}

// probeModify asks GNS3 whether the token may PUT path, without changing
// anything: GNS3 v3 has no route that tests a privilege, so the probe is
// a PUT whose body is a JSON array, which no update route accepts. GNS3
// (FastAPI) checks the route's privilege (its has_privilege dependency)
// before it validates the body: a caller without the privilege gets 403,
// one with it 422 for the body, and the route's handler never runs. A
// 2xx (a controller that would take an array and change nothing with it)
// also means allowed. 401 is an error matching ErrUnauthorized; any other
// answer an error.
func (c *Client) probeModify(ctx context.Context, token, path string) (bool, error) {
	err := c.Do(ctx, token, http.MethodPut, path, json.RawMessage("[]"), nil)
	var se *StatusError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &se) && se.StatusCode == http.StatusUnprocessableEntity:
		return true, nil
	case errors.Is(err, ErrForbidden):
		return false, nil
	}
	return false, err
}
