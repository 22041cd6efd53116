package gns3_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

func TestMeAndUserGroups(t *testing.T) {
	srv := gns3test.NewServer(t, nil)
	alice := srv.AddUser(gns3test.User{Username: "alice", Email: "alice@example.com"})
	admin := srv.AddUser(gns3test.User{Username: "admin", Superadmin: true})
	auditor := srv.AddUser(gns3test.User{Username: "auditor", Privileges: []string{"Group.Audit"}})
	srv.BindToken(tokAlice, "alice")
	srv.BindToken("admin-token", "admin")
	srv.BindToken("auditor-token", "auditor")
	srv.BindToken("ghost-token", "nobody")
	staff := srv.AddGroup("staff", "alice", "auditor")
	srv.AddGroup("others", "admin")
	c := newClient(t, srv.URL)
	ctx := context.Background()

	me, err := c.Me(ctx, tokAlice)
	if err != nil || me.UserID != alice.UserID || me.Username != "alice" || me.Email != "alice@example.com" || !me.IsActive || me.IsSuperadmin {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	if me, err := c.Me(ctx, "admin-token"); err != nil || me.UserID != admin.UserID || !me.IsSuperadmin {
		t.Fatalf("Me(admin) = %+v, %v", me, err)
	}
	for _, tok := range []string{"", "ghost-token", "unknown"} {
		_, err := c.Me(ctx, tok)
		if !errors.Is(err, gns3.ErrUnauthorized) || errors.Is(err, gns3.ErrForbidden) {
			t.Errorf("Me(%q) = %v, want 401", tok, err)
		}
	}

	// Listing a user's groups needs Group.Audit (superadmins have it).
	_, err = c.UserGroups(ctx, tokAlice, alice.UserID)
	var se *gns3.StatusError
	if !errors.Is(err, gns3.ErrForbidden) || !errors.As(err, &se) || se.StatusCode != http.StatusForbidden ||
		se.Message != "Permission denied (privilege Group.Audit is required)" {
		t.Fatalf("UserGroups without privilege = %v", err)
	}
	for _, tok := range []string{"admin-token", "auditor-token"} {
		gs, err := c.UserGroups(ctx, tok, alice.UserID)
		if err != nil || len(gs) != 1 || gs[0].UserGroupID != staff || gs[0].Name != "staff" {
			t.Fatalf("UserGroups(%s) = %+v, %v", tok, gs, err)
		}
	}
	if gs, err := c.UserGroups(ctx, "auditor-token", auditor.UserID); err != nil || len(gs) != 1 {
		t.Fatalf("auditor's groups = %+v, %v", gs, err)
	}
	if _, err := c.UserGroups(ctx, "admin-token", "not-a-uuid"); !errors.Is(err, gns3.ErrInvalidID) {
		t.Fatalf("invalid id: %v", err)
	}
	if srv.Hits("GET /v3/access/users/not-a-uuid/groups") != 0 {
		t.Fatal("an invalid id was sent")
	}

	// A JWT names its user by its sub, as GNS3 tokens do.
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln" // {"sub":"alice"}
	if me, err := c.Me(ctx, jwt); err != nil || me.UserID != alice.UserID {
		t.Fatalf("Me(jwt) = %+v, %v", me, err)
	}

	// The privilege shows in the fake's RBAC hooks too.
	srv.SetRequestAuthorizer(gns3test.DenyPrivileges("Group.Audit"))
	if _, err := c.UserGroups(ctx, "admin-token", alice.UserID); !errors.Is(err, gns3.ErrForbidden) {
		t.Fatalf("denied privilege: %v", err)
	}
	if _, err := c.Me(ctx, tokAlice); err != nil {
		t.Fatalf("/me needs no privilege: %v", err)
	}
}

func TestMeUnavailable(t *testing.T) {
	c := newClient(t, deadURL(t))
	_, err := c.Me(context.Background(), tokAlice)
	if !errors.Is(err, gns3.ErrUnavailable) {
		t.Fatalf("Me on a dead controller = %v", err)
	}
	noSecret(t, err)
}

// TestPrivilegeProbes: Group and User need the Audit privilege on the
// resource, CanModifyGroup and CanModifyUser tell Modify apart without
// changing anything, each as GNS3 decides on the path (ACEs on the
// resource or a parent, superadmins).
func TestPrivilegeProbes(t *testing.T) {
	srv := gns3test.NewServer(t, nil)
	staff := srv.AddGroup("staff", "alice")
	labs := srv.AddGroup("labs")
	bob := srv.AddUser(gns3test.User{Username: "bob"})
	srv.AddUser(gns3test.User{Username: "alice", ACL: map[string][]string{
		"/access/groups/" + staff:     {"Group.Audit", "Group.Modify"},
		"/access/users/" + bob.UserID: {"User.Audit"},
	}})
	srv.AddUser(gns3test.User{Username: "manager", ACL: map[string][]string{"/access": {"Group.Modify", "User.Modify"}}})
	srv.AddUser(gns3test.User{Username: "root", Superadmin: true})
	for _, u := range []string{"alice", "manager", "root", "bob"} {
		srv.BindToken(u+"-token", u)
	}
	c := newClient(t, srv.URL)
	ctx := context.Background()
	missing := "00000000-0000-4000-8000-000000000000"

	tests := []struct {
		name  string
		check func() (bool, error)
		want  bool
		err   error
	}{
		{"alice audits staff", func() (bool, error) { _, err := c.Group(ctx, "alice-token", staff); return err == nil, err }, true, nil},
		{"alice audits labs", func() (bool, error) { _, err := c.Group(ctx, "alice-token", labs); return err == nil, err }, false, gns3.ErrForbidden},
		{"alice modifies staff", func() (bool, error) { return c.CanModifyGroup(ctx, "alice-token", staff) }, true, nil},
		{"alice modifies labs", func() (bool, error) { return c.CanModifyGroup(ctx, "alice-token", labs) }, false, nil},
		{"alice audits bob", func() (bool, error) {
			u, err := c.User(ctx, "alice-token", bob.UserID)
			return err == nil && u.Username == "bob", err
		}, true, nil},
		{"alice modifies bob", func() (bool, error) { return c.CanModifyUser(ctx, "alice-token", bob.UserID) }, false, nil},
		{"manager modifies labs (ACE on /access)", func() (bool, error) { return c.CanModifyGroup(ctx, "manager-token", labs) }, true, nil},
		{"manager modifies bob", func() (bool, error) { return c.CanModifyUser(ctx, "manager-token", bob.UserID) }, true, nil},
		{"manager audits labs", func() (bool, error) { _, err := c.Group(ctx, "manager-token", labs); return err == nil, err }, false, gns3.ErrForbidden},
		{"root modifies labs", func() (bool, error) { return c.CanModifyGroup(ctx, "root-token", labs) }, true, nil},
		{"root audits a missing group", func() (bool, error) { _, err := c.Group(ctx, "root-token", missing); return err == nil, err }, false, gns3.ErrNotFound},
		{"bob modifies staff", func() (bool, error) { return c.CanModifyGroup(ctx, "bob-token", staff) }, false, nil},
		{"unknown token", func() (bool, error) { return c.CanModifyGroup(ctx, "nobody-token", staff) }, false, gns3.ErrUnauthorized},
		{"invalid id", func() (bool, error) { return c.CanModifyGroup(ctx, "root-token", "staff") }, false, gns3.ErrInvalidID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.check()
			if got != tc.want || (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Fatalf("= %v, %v; want %v, %v", got, err, tc.want, tc.err)
			}
		})
	}
	if n := srv.Hits("PUT /v3/access/groups/staff"); n != 0 {
		t.Fatalf("an invalid id was sent %d times", n)
	}
}
