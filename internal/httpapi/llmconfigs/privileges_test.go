package llmconfigs_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/store"
)

// clock is a settable clock for the privilege cache.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time            { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration)   { c.offset.Add(int64(d)) }
func newClock() (*clock, func() time.Time) { c := &clock{}; return c, c.now }

// TestGroupManagedWithGNS3Token: a user with Group.Modify on a group
// manages its configurations with their GNS3 token alone, as the web UI's
// group tab does; one without gets 403 with a message; GNS3 is asked once
// per token and privilege within the cache's lifetime.
func TestGroupManagedWithGNS3Token(t *testing.T) {
	clk, now := newClock()
	e := newEnv(t, envOptions{now: now}) // no ADMIN_TOKEN at all
	staff := e.gns3.AddGroup("staff", "alice", "bob", "carol")
	e.gns3.AddUser(gns3test.User{Username: "alice", ACL: map[string][]string{"/access/groups/" + staff: {"Group.Audit", "Group.Modify"}}})
	e.gns3.AddUser(gns3test.User{Username: "bob"})
	e.gns3.AddUser(gns3test.User{Username: "carol", ACL: map[string][]string{"/access/groups": {"Group.Audit"}}})
	gpath := "/v3/access/groups/" + staff + "/llm-model-configs"
	alice := "Bearer " + e.token("alice")
	probe, read := "PUT /v3/access/groups/"+staff, "GET /v3/access/groups/"+staff

	// The group tab's calls, with alice's token only.
	c := decodeConfig(t, must(t, e.do(t, http.MethodPost, gpath, alice, map[string]any{
		"name": "team", "provider": "openai", "model": "gpt-4o", "context_limit": 128, "api_key": secretKey, "custom": "x"}), http.StatusCreated))
	if c.GroupID == nil || *c.GroupID != staff || !c.APIKeySet || c.Config["custom"] != "x" {
		t.Fatalf("created %+v", c)
	}
	l := decodeList(t, must(t, e.do(t, http.MethodGet, gpath, alice, nil), http.StatusOK))
	if l.Total != 1 || l.DefaultConfig != nil {
		t.Fatalf("list %+v", l)
	}
	must(t, e.do(t, http.MethodGet, gpath+"/default", alice, nil), http.StatusNotFound)
	d := decodeConfig(t, must(t, e.do(t, http.MethodPut, gpath+"/default/"+c.ConfigID, alice, nil), http.StatusOK))
	if !d.IsDefault {
		t.Fatalf("set default %+v", d)
	}
	u := decodeConfig(t, must(t, e.do(t, http.MethodPut, gpath+"/"+c.ConfigID, alice, map[string]any{"copilot_mode": "lab_automation_assistant"}), http.StatusOK))
	if u.Version != 2 || u.Config["copilot_mode"] != "lab_automation_assistant" || !u.IsDefault {
		t.Fatalf("update %+v", u)
	}
	if g := decodeConfig(t, must(t, e.do(t, http.MethodGet, gpath+"/default", alice, nil), http.StatusOK)); g.ConfigID != c.ConfigID {
		t.Fatalf("default %+v", g)
	}
	u = decodeConfig(t, must(t, e.do(t, http.MethodPut, gpath+"/"+c.ConfigID, alice, map[string]any{"is_default": false}), http.StatusOK))
	if u.IsDefault {
		t.Fatalf("unset %+v", u)
	}
	must(t, e.do(t, http.MethodGet, gpath+"/default", alice, nil), http.StatusNotFound)

	// GNS3 was asked once per privilege: the answers are remembered.
	if p, g := e.gns3.Hits(probe), e.gns3.Hits(read); p != 1 || g != 1 {
		t.Fatalf("GNS3 asked %d times for Group.Modify and %d for Group.Audit, want 1 and 1", p, g)
	}
	// Past their lifetime (30 s), it is asked again.
	clk.advance(31 * time.Second)
	must(t, e.do(t, http.MethodGet, gpath, alice, nil), http.StatusOK)
	must(t, e.do(t, http.MethodPut, gpath+"/default/"+c.ConfigID, alice, nil), http.StatusOK)
	if p, g := e.gns3.Hits(probe), e.gns3.Hits(read); p != 2 || g != 2 {
		t.Fatalf("after the TTL: GNS3 asked %d and %d times, want 2 and 2", p, g)
	}

	// Bob holds nothing on the group: 403 with the privilege it takes,
	// nothing changed.
	bob := "Bearer " + e.token("bob")
	for _, rt := range []struct{ method, path, priv, verb string }{
		{http.MethodGet, gpath, "Group.Audit", "see"},
		{http.MethodGet, gpath + "/default", "Group.Audit", "see"},
		{http.MethodPost, gpath, "Group.Modify", "change"},
		{http.MethodPut, gpath + "/" + c.ConfigID, "Group.Modify", "change"},
		{http.MethodPut, gpath + "/default/" + c.ConfigID, "Group.Modify", "change"},
		{http.MethodDelete, gpath + "/" + c.ConfigID, "Group.Modify", "change"},
	} {
		r := e.do(t, rt.method, rt.path, bob, map[string]any{"name": "pwned"})
		want := "You need the GNS3 privilege " + rt.priv + " on group '" + staff + "' to " + rt.verb + " its LLM model configurations (ask a GNS3 administrator, or use the administrator token)"
		if r.status != http.StatusForbidden || r.message() != want {
			t.Errorf("bob %s %s: %d %s", rt.method, rt.path, r.status, r.body)
		}
	}
	// Carol may read every group (an ACE on /access/groups), not change.
	carol := "Bearer " + e.token("carol")
	must(t, e.do(t, http.MethodGet, gpath, carol, nil), http.StatusOK)
	must(t, e.do(t, http.MethodDelete, gpath+"/"+c.ConfigID, carol, nil), http.StatusForbidden)
	got, err := e.st.GetLLMConfig(context.Background(), store.GroupOwner(staff), c.ConfigID)
	if err != nil || got.Name != "team" || got.Version != 3 { // two updates by alice
		t.Fatalf("the group's configuration changed: %+v %v", got, err)
	}

	// Alice deletes it.
	must(t, e.do(t, http.MethodDelete, gpath+"/"+c.ConfigID, alice, nil), http.StatusNoContent)
	must(t, e.do(t, http.MethodDelete, gpath+"/"+c.ConfigID, alice, nil), http.StatusNotFound)

	// A group GNS3 does not have: 404 for a reader (GNS3 checks first).
	r := e.do(t, http.MethodGet, "/v3/access/groups/00000000-0000-4000-8000-000000000000/llm-model-configs", carol, nil)
	if r.status != http.StatusNotFound || !strings.Contains(r.message(), "not found on the GNS3 controller") {
		t.Fatalf("missing group: %d %s", r.status, r.body)
	}
	e.scan(t, secretKey)
}

// TestGroupPrivilegeControllerDown: a controller that cannot be asked is a
// 502, never a grant.
func TestGroupPrivilegeControllerDown(t *testing.T) {
	e := newEnv(t, envOptions{gns3URL: "http://127.0.0.1:1"})
	r := e.as(t, "alice", http.MethodPost, "/v3/access/groups/11111111-1111-4111-8111-111111111111/llm-model-configs", nested("x", nil))
	if r.status != http.StatusBadGateway || !strings.HasPrefix(r.message(), "Could not check your privileges on the GNS3 controller: ") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestOtherUsersByPrivilege: an administrator opens another user's
// configurations by GNS3 user_id with User.Audit on that user, and
// changes them with User.Modify as well; everybody else stays 403.
func TestOtherUsersByPrivilege(t *testing.T) {
	e := newEnv(t, envOptions{})
	bob := e.gns3.AddUser(gns3test.User{Username: "bob"})
	carol := e.gns3.AddUser(gns3test.User{Username: "carol"})
	e.gns3.AddUser(gns3test.User{Username: "auditor", ACL: map[string][]string{"/access/users/" + bob.UserID: {"User.Audit"}}})
	e.gns3.AddUser(gns3test.User{Username: "manager", ACL: map[string][]string{"/access/users": {"User.Audit", "User.Modify"}}})
	e.gns3.AddUser(gns3test.User{Username: "mallory"})
	own := e.create(t, "bob", withDefault(nested("bob's", map[string]any{"api_key": secretKey})))
	bobs := "/v3/access/users/" + bob.UserID + "/llm-model-configs"
	auditor := "Bearer " + e.token("auditor")

	// The auditor reads bob's, by his GNS3 id, and may not change them.
	l := decodeList(t, must(t, e.do(t, http.MethodGet, bobs, auditor, nil), http.StatusOK))
	if l.Total != 1 || l.Configs[0].ConfigID != own.ConfigID || l.DefaultConfig == nil || *l.Configs[0].UserID != "bob" {
		t.Fatalf("bob's list as the auditor %+v", l)
	}
	must(t, e.do(t, http.MethodGet, bobs+"/own", auditor, nil), http.StatusOK)
	if d := decodeConfig(t, must(t, e.do(t, http.MethodGet, bobs+"/default", auditor, nil), http.StatusOK)); d.ConfigID != own.ConfigID {
		t.Fatalf("bob's default %+v", d)
	}
	r := must(t, e.do(t, http.MethodPut, bobs+"/"+own.ConfigID, auditor, map[string]any{"name": "x"}), http.StatusForbidden)
	if r.message() != "You need the GNS3 privilege User.Modify on user '"+bob.UserID+"' to change their LLM model configurations" {
		t.Fatalf("%s", r.body)
	}
	if n := e.gns3.Hits("GET /v3/access/users/" + bob.UserID); n != 1 {
		t.Fatalf("GNS3 asked %d times for User.Audit, want 1 (remembered)", n)
	}
	// Not carol's.
	r = must(t, e.do(t, http.MethodGet, "/v3/access/users/"+carol.UserID+"/llm-model-configs", auditor, nil), http.StatusForbidden)
	if r.message() != "You can only manage your own LLM model configurations (use 'me' as the user id); another user's need the GNS3 privilege User.Audit on that user" {
		t.Fatalf("%s", r.body)
	}

	// The manager changes them; bob sees the change.
	manager := "Bearer " + e.token("manager")
	c := decodeConfig(t, must(t, e.do(t, http.MethodPost, bobs, manager, nested("from the admin", nil)), http.StatusCreated))
	if c.UserID == nil || *c.UserID != "bob" {
		t.Fatalf("created for bob %+v", c)
	}
	must(t, e.do(t, http.MethodPut, bobs+"/default/"+c.ConfigID, manager, nil), http.StatusOK)
	must(t, e.do(t, http.MethodPut, bobs+"/"+own.ConfigID, manager, map[string]any{"temperature": 0.2}), http.StatusOK)
	if d := decodeConfig(t, must(t, e.as(t, "bob", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != c.ConfigID {
		t.Fatalf("bob's default %+v", d)
	}
	must(t, e.do(t, http.MethodDelete, bobs+"/"+c.ConfigID, manager, nil), http.StatusNoContent)
	if l := decodeList(t, must(t, e.as(t, "bob", http.MethodGet, ownPath, nil), http.StatusOK)); l.Total != 1 {
		t.Fatalf("bob's after the delete %+v", l)
	}

	// Mallory holds nothing; a username in the path is never another user.
	for _, p := range []string{bobs, bobs + "/own", bobs + "/default", "/v3/access/users/bob/llm-model-configs"} {
		r := e.as(t, "mallory", http.MethodGet, p, nil)
		if r.status != http.StatusForbidden || !strings.HasPrefix(r.message(), "You can only manage your own LLM model configurations") {
			t.Errorf("mallory %s: %d %s", p, r.status, r.body)
		}
	}
	must(t, e.do(t, http.MethodGet, "/v3/access/users/bob/llm-model-configs", manager, nil), http.StatusForbidden)
	r = e.as(t, "mallory", http.MethodPost, bobs, nested("pwn", nil))
	if r.status != http.StatusForbidden {
		t.Fatalf("mallory creates: %d %s", r.status, r.body)
	}
	if cs, _ := e.st.ListLLMConfigs(context.Background(), store.UserOwner("bob")); len(cs) != 1 {
		t.Fatalf("bob has %d configurations", len(cs))
	}
	// A user GNS3 does not have (the manager may audit anyone).
	r = e.do(t, http.MethodGet, "/v3/access/users/00000000-0000-4000-8000-000000000000/llm-model-configs", manager, nil)
	if r.status != http.StatusNotFound {
		t.Fatalf("missing user: %d %s", r.status, r.body)
	}
	e.scan(t, secretKey)
}
