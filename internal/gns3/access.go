package gns3

import (
	"context"
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
