package llmconfigs_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
)

// TestDefaultGroupRef: the chat panel's model picker makes a group
// configuration the user's default (PUT .../default/{config_id}), by
// reference: the list and Effective show it, a group edit reaches the
// user, is_default false drops it (the group default applies again), her
// own default replaces it, and deleting the group's configuration drops
// it. Only a group the user is in may be named.
func TestDefaultGroupRef(t *testing.T) {
	e := newEnv(t, envOptions{adminToken: adminToken})
	e.gns3.AddUser(gns3test.User{Username: "alice", Privileges: []string{"Group.Audit"}})
	e.gns3.AddUser(gns3test.User{Username: "dave", Privileges: []string{"Group.Audit"}}) // in no group
	e.gns3.AddUser(gns3test.User{Username: "bob"})                                       // may not list his groups
	staff := e.gns3.AddGroup("staff", "alice", "bob")
	gpath := "/v3/access/groups/" + staff + "/llm-model-configs"
	g1 := decodeConfig(t, must(t, e.admin(t, http.MethodPost, gpath, withDefault(nested("group default", nil))), http.StatusCreated))
	g2 := decodeConfig(t, must(t, e.admin(t, http.MethodPost, gpath, nested("picked", map[string]any{"api_key": secretKey})), http.StatusCreated))
	ctx := context.Background()
	aliceID := auth.Identity{UserID: "alice", Token: e.token("alice"), Via: auth.ViaJWT}
	effective := func(want string) {
		t.Helper()
		c, g, err := llmconfig.Effective(ctx, e.st, e.groups, aliceID)
		if want == "" {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("Effective = %+v, %v; want none", c, err)
			}
			return
		}
		if err != nil || c.ID != want {
			t.Fatalf("Effective = %+v %+v %v, want %s", c, g, err, want)
		}
	}
	listed := func(wantDefault string) list {
		t.Helper()
		l := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, mine, nil), http.StatusOK))
		if wantDefault == "" {
			if l.DefaultConfig != nil {
				t.Fatalf("default_config %+v, want none", l.DefaultConfig)
			}
			return l
		}
		if l.DefaultConfig == nil || l.DefaultConfig.ConfigID != wantDefault {
			t.Fatalf("default_config %+v, want %s", l.DefaultConfig, wantDefault)
		}
		return l
	}
	effective(g1.ConfigID)

	// The picker: 200, the group's configuration as the user's default.
	d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+g2.ConfigID, nil), http.StatusOK))
	if d.ConfigID != g2.ConfigID || !d.IsDefault || d.Source != "group" || d.GroupName == nil || *d.GroupName != "staff" || d.APIKeyHint != "" {
		t.Fatalf("set default answer %+v", d)
	}
	l := listed(g2.ConfigID)
	for _, c := range l.Configs {
		if c.IsDefault != (c.ConfigID == g2.ConfigID) {
			t.Errorf("%s (%s) is_default %v in alice's view", c.Name, c.ConfigID, c.IsDefault)
		}
	}
	effective(g2.ConfigID)
	if d := decodeConfig(t, must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusOK)); d.ConfigID != g2.ConfigID || !d.IsDefault || d.Source != "group" {
		t.Fatalf("GET default %+v", d)
	}
	// The group's own default is unchanged, and a group edit reaches alice.
	if gd := decodeConfig(t, must(t, e.admin(t, http.MethodGet, gpath+"/default", nil), http.StatusOK)); gd.ConfigID != g1.ConfigID {
		t.Fatalf("group default %+v", gd)
	}
	must(t, e.admin(t, http.MethodPut, gpath+"/"+g2.ConfigID, map[string]any{"model": "gpt-4.1"}), http.StatusOK)
	if c, _, err := llmconfig.Effective(ctx, e.st, e.groups, aliceID); err != nil || c.Config["model"] != "gpt-4.1" {
		t.Fatalf("after the group edit: %+v %v", c, err)
	}

	// Unset (the web UI's PUT .../{config_id} {"is_default": false}): the
	// group default applies again.
	u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+g2.ConfigID, map[string]any{"is_default": false}), http.StatusOK))
	if u.IsDefault || u.ConfigID != g2.ConfigID {
		t.Fatalf("unset answer %+v", u)
	}
	listed(g1.ConfigID)
	effective(g1.ConfigID)
	// Again: nothing to do.
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+g2.ConfigID, map[string]any{"is_default": false}), http.StatusOK)
	// is_default true in an update sets it too; other fields are the group's.
	if u := decodeConfig(t, must(t, e.as(t, "alice", http.MethodPut, mine+"/"+g2.ConfigID, map[string]any{"is_default": true}), http.StatusOK)); !u.IsDefault {
		t.Fatalf("is_default true %+v", u)
	}
	effective(g2.ConfigID)
	r := must(t, e.as(t, "alice", http.MethodPut, mine+"/"+g2.ConfigID, map[string]any{"is_default": true, "model": "pwned"}), http.StatusForbidden)
	if !strings.Contains(r.message(), "belongs to group 'staff'") {
		t.Fatalf("%s", r.body)
	}

	// Her own default replaces the reference, and the picker the other way.
	own := e.create(t, "alice", withDefault(nested("mine", nil)))
	listed(own.ConfigID)
	effective(own.ConfigID)
	must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+g2.ConfigID, nil), http.StatusOK)
	listed(g2.ConfigID)
	if l := decodeList(t, must(t, e.as(t, "alice", http.MethodGet, ownPath, nil), http.StatusOK)); l.DefaultConfig != nil {
		t.Fatalf("her own list still has a default: %+v", l.DefaultConfig)
	}
	// Unsetting her former own default does not drop the reference.
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+own.ConfigID, map[string]any{"is_default": false}), http.StatusOK)
	effective(g2.ConfigID)

	// Deleting the group's configuration drops the reference.
	must(t, e.admin(t, http.MethodDelete, gpath+"/"+g2.ConfigID, nil), http.StatusNoContent)
	listed(g1.ConfigID)
	effective(g1.ConfigID)
	// With no group default either: none (the server's default, else the
	// chat's documented 400, is the caller's).
	must(t, e.as(t, "alice", http.MethodPut, mine+"/default/"+g1.ConfigID, nil), http.StatusOK)
	must(t, e.as(t, "alice", http.MethodPut, mine+"/"+g1.ConfigID, map[string]any{"is_default": false}), http.StatusOK)
	must(t, e.admin(t, http.MethodPut, gpath+"/"+g1.ConfigID, map[string]any{"is_default": false}), http.StatusOK)
	listed("")
	effective("")
	must(t, e.as(t, "alice", http.MethodGet, defPath, nil), http.StatusNotFound)

	// Only a group the user is in: dave is in none, bob's GNS3 says none.
	for _, u := range []string{"dave", "bob"} {
		r := must(t, e.as(t, u, http.MethodPut, mine+"/default/"+g1.ConfigID, nil), http.StatusNotFound)
		if r.message() != "LLM model configuration '"+g1.ConfigID+"' not found" {
			t.Fatalf("%s: %s", u, r.body)
		}
		must(t, e.as(t, u, http.MethodPut, mine+"/"+g1.ConfigID, map[string]any{"is_default": true}), http.StatusNotFound)
		if _, err := e.st.DefaultLLMConfigRef(ctx, u); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s has a reference: %v", u, err)
		}
	}
	e.scan(t, secretKey)
}
