package skillsreload_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/skillsreload"
	"agentchat/internal/skills"
	"agentchat/internal/store"
)

const adminToken = "admin-token-0123456789"

// skillsDir returns a SKILLS_DIR with one scenario in the upstream layout.
func skillsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "injection"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "injection", "extra.yaml"), "name: Extra\ndescription: more\nissues:\n  extra_fault:\n    name: Extra\n    description: An extra fault\n")
	return dir
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

type env struct {
	*apitest.Env
	reg *skills.Registry
	dir string
}

func newEnv(t *testing.T, single bool, supers skillsreload.Superadmins) env {
	t.Helper()
	dir := skillsDir(t)
	reg, err := skills.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := apitest.New(t, apitest.Options{SingleUser: single}, func(_ store.Store, a *auth.Authenticator) []httpapi.Route {
		return skillsreload.New(skillsreload.Options{Skills: reg, AdminToken: adminToken, Auth: a, Superadmins: supers}).Routes()
	})
	return env{Env: e, reg: reg, dir: dir}
}

// Only administrators reload: the admin token, the local user, a GNS3
// superadmin. Everyone else is refused before anything is read.
func TestReloadAuthorization(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	fake.AddUser(gns3test.User{Username: "root", Superadmin: true})
	fake.AddUser(gns3test.User{Username: "alice"})
	gc, err := gns3.New(fake.URL, nil, gns3.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, false, skillsreload.GNS3Superadmins{Client: gc})
	plain := newEnv(t, false, nil)
	for _, tc := range []struct {
		name   string
		e      env
		authz  string
		status int
		msg    string
	}{
		{"no credentials", e, "", http.StatusUnauthorized, "Not authenticated"},
		{"wrong bearer", e, "Bearer not-the-admin-token", http.StatusUnauthorized, "Could not validate credentials"},
		{"ordinary user", e, "Bearer " + e.Token("alice"), http.StatusForbidden, "Only administrators can reload skills"},
		{"user unknown to GNS3", e, "Bearer " + e.Token("mallory"), http.StatusUnauthorized, "Could not validate credentials"},
		{"user without GNS3", plain, "Bearer " + plain.Token("root"), http.StatusForbidden, "Only administrators can reload skills"},
		{"superadmin", e, "Bearer " + e.Token("root"), http.StatusOK, ""},
		{"admin token", e, "Bearer " + adminToken, http.StatusOK, ""},
		{"admin token, lower-case scheme", plain, "bearer " + adminToken, http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.e.Do(http.MethodPost, skillsreload.PathReload, tc.authz, nil)
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
			}
			if tc.msg != "" && res.Message() != tc.msg {
				t.Fatalf("message %q, want %q", res.Message(), tc.msg)
			}
			if tc.status == http.StatusOK {
				var c skills.Counts
				res.JSON(t, &c)
				if c != tc.e.reg.Current().Counts() || c.Scenarios < 13 || c.Devices < 4 {
					t.Fatalf("counts %+v", c)
				}
			}
		})
	}
	single := newEnv(t, true, nil)
	if res := single.Do(http.MethodPost, skillsreload.PathReload, "", nil); res.Status != http.StatusOK {
		t.Fatalf("local user: %d %s", res.Status, res.Body)
	}
}

// A broken file is named (422) and the previous skills stay in use; once
// fixed, the reload answers the new counts.
func TestReloadBrokenFileKeepsSkills(t *testing.T) {
	e := newEnv(t, false, nil)
	before := e.reg.Current()
	writeFile(t, filepath.Join(e.dir, "injection", "zz_broken.yaml"), "name: [unclosed\n")
	res := e.Do(http.MethodPost, skillsreload.PathReload, "Bearer "+adminToken, nil)
	if res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	var body struct{ Message, File string }
	res.JSON(t, &body)
	if body.File != "injection/zz_broken.yaml" || !strings.Contains(body.Message, "injection/zz_broken.yaml") || !strings.Contains(body.Message, "yaml") {
		t.Fatalf("body %+v", body)
	}
	if e.reg.Current() != before {
		t.Fatal("a failed reload replaced the skills in use")
	}
	writeFile(t, filepath.Join(e.dir, "injection", "zz_broken.yaml"), "name: Z\ndescription: z\nissues:\n  z_fault:\n    name: Z\n    description: z\n")
	res = e.Do(http.MethodPost, skillsreload.PathReload, "Bearer "+adminToken, nil)
	var c skills.Counts
	res.JSON(t, &c)
	if res.Status != http.StatusOK || c.Scenarios != before.Counts().Scenarios+1 {
		t.Fatalf("after the fix: %d %+v", res.Status, c)
	}
	if _, ok := e.reg.Current().Scenario("z_fault"); !ok {
		t.Fatal("the reloaded scenario is not served")
	}
}
