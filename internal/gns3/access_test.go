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
