package labchanges_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/labchanges"
	"agentchat/internal/httpapi/skillsreload"
	"agentchat/internal/store"
)

const adminToken = "admin-token-0123456789abcdef0123456789"

// env is the routes over SQLite with a fake GNS3 holding one opened
// project with the seeded topology.
type env struct {
	*apitest.Env
	fake *gns3test.Server
	c    *gns3.Client
	pid  string
}

func newEnv(t *testing.T, snapshots bool) *env {
	t.Helper()
	fake := gns3test.NewServer(t, nil)
	pid := fake.AddProject("lab", gns3.StatusOpened)
	fake.SeedTopology(pid)
	c, err := gns3.New(fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{fake: fake, c: c, pid: pid}
	e.Env = apitest.New(t, apitest.Options{}, func(st store.Store, a *auth.Authenticator) []httpapi.Route {
		return labchanges.New(labchanges.Options{Store: st, GNS3: c, Snapshots: snapshots, AdminToken: adminToken, Auth: a,
			Superadmins: skillsreload.GNS3Superadmins{Client: c}}).Routes()
	})
	return e
}

// session stores a session of user with a snapshot taken now, and
// returns its key and the snapshot.
func (e *env) session(t *testing.T, user string) (store.Key, *gns3.Snapshot) {
	t.Helper()
	ctx := context.Background()
	k := store.Key{ProjectID: e.pid, UserID: user, ThreadID: uuid.NewString()}
	if err := e.Store.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: user, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	snap, err := e.c.CreateSnapshot(ctx, "t", e.pid, "copilot "+k.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	rec := store.SnapshotRecord{SnapshotID: snap.SnapshotID, Name: snap.Name, TurnID: "turn-1", TakenAt: time.Now().UTC()}
	if _, err := e.Store.UpdateSessionMetadata(ctx, k, map[string]any{store.MetadataLastSnapshot: rec}); err != nil {
		t.Fatal(err)
	}
	return k, snap
}

func undoPath(pid, sid string) string {
	return "/v3/projects/" + pid + "/chat/sessions/" + sid + "/undo"
}

func TestUndoRestoresTheSessionsSnapshot(t *testing.T) {
	e := newEnv(t, true)
	k, snap := e.session(t, "alice")
	nodes, _ := e.c.GetNodes(context.Background(), "t", e.pid)
	if err := e.c.DeleteNode(context.Background(), "t", e.pid, nodes[0].NodeID); err != nil {
		t.Fatal(err)
	}
	// Bob cannot undo Alice's session: 404, nothing restored.
	if r := e.As("bob", http.MethodPost, undoPath(e.pid, k.ThreadID), nil); r.Status != http.StatusNotFound {
		t.Fatalf("another user's undo: %d %s", r.Status, r.Body)
	}
	if got := e.fake.Restores(e.pid); len(got) != 0 {
		t.Fatalf("another user's undo restored %v", got)
	}
	// Under both prefixes.
	for _, path := range []string{undoPath(e.pid, k.ThreadID), "/v3/copilot/projects/" + e.pid + "/chat/sessions/" + k.ThreadID + "/undo"} {
		r := e.As("alice", http.MethodPost, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("undo %s: %d %s", path, r.Status, r.Body)
		}
		var res labchanges.UndoResult
		r.JSON(t, &res)
		if res.SnapshotID != snap.SnapshotID || res.SessionID != k.ThreadID || !strings.Contains(res.Message, "not") || !strings.HasSuffix(res.RestoredAt, "+00:00") {
			t.Fatalf("undo answered %+v", res)
		}
	}
	if got := e.fake.Restores(e.pid); len(got) != 2 || got[0] != snap.SnapshotID {
		t.Fatalf("fake restores %v", got)
	}
	after, _ := e.c.GetNodes(context.Background(), "t", e.pid)
	if len(after) != len(nodes) {
		t.Fatalf("after undo %d nodes, want %d", len(after), len(nodes))
	}
	// The undo is in Alice's audit.
	var page labchanges.AuditPage
	e.As("alice", http.MethodGet, "/v3/projects/"+e.pid+"/chat/audit", nil).JSON(t, &page)
	if len(page.Entries) != 2 || page.Entries[0].Tool != labchanges.ToolUndo || page.Entries[0].Status != store.AuditSuccess ||
		page.Entries[0].SnapshotID != snap.SnapshotID {
		t.Fatalf("audit after undo: %+v", page)
	}
}

func TestUndoRefusals(t *testing.T) {
	e := newEnv(t, true)
	k, _ := e.session(t, "alice")
	bare := store.Key{ProjectID: e.pid, UserID: "alice", ThreadID: uuid.NewString()}
	if err := e.Store.CreateSession(context.Background(), &store.Session{ProjectID: e.pid, UserID: "alice", ThreadID: bare.ThreadID}); err != nil {
		t.Fatal(err)
	}
	r := e.As("alice", http.MethodPost, undoPath(e.pid, bare.ThreadID), nil)
	if r.Status != http.StatusNotFound || !strings.Contains(r.Message(), "No snapshot") {
		t.Fatalf("a session without snapshot: %d %s", r.Status, r.Body)
	}
	if r := e.As("alice", http.MethodPost, undoPath(e.pid, "not-a-uuid"), nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad session id: %d %s", r.Status, r.Body)
	}
	// A running turn holds the session: 409 with Retry-After.
	if err := e.Store.AcquireLease(context.Background(), k, "turn", time.Minute); err != nil {
		t.Fatal(err)
	}
	r = e.As("alice", http.MethodPost, undoPath(e.pid, k.ThreadID), nil)
	if r.Status != http.StatusConflict || r.Header.Get("Retry-After") == "" {
		t.Fatalf("undo during a turn: %d %s", r.Status, r.Body)
	}
	_ = e.Store.ReleaseLease(context.Background(), k, "turn")
	// GNS3 refuses the restore.
	e.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Snapshot.Restore"))
	r = e.As("alice", http.MethodPost, undoPath(e.pid, k.ThreadID), nil)
	if r.Status != http.StatusForbidden || !strings.Contains(r.Message(), "Snapshot.Restore") {
		t.Fatalf("undo without the privilege: %d %s", r.Status, r.Body)
	}
	if got := e.fake.Restores(e.pid); len(got) != 0 {
		t.Fatalf("restored %v", got)
	}
}

func TestUndoDisabled(t *testing.T) {
	e := newEnv(t, false)
	k, _ := e.session(t, "alice")
	r := e.As("alice", http.MethodPost, undoPath(e.pid, k.ThreadID), nil)
	if r.Status != http.StatusForbidden || !strings.Contains(r.Message(), "SNAPSHOTS=off") {
		t.Fatalf("undo with SNAPSHOTS=off: %d %s", r.Status, r.Body)
	}
	if got := e.fake.Restores(e.pid); len(got) != 0 {
		t.Fatalf("restored %v", got)
	}
}

func TestAuditOwnEntriesAdminAll(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	for i, u := range []string{"alice", "bob", "alice"} {
		args := fmt.Sprintf(`{"device_configs":[{"device_name":"R%d","config_commands":["hostname X"]}]}`, i)
		if err := e.Store.AppendAudit(ctx, &store.AuditEntry{ProjectID: e.pid, UserID: u, ThreadID: "t", Tool: "execute_multiple_device_config_commands",
			Arguments: args, Summary: "configure", Status: store.AuditSuccess, Decision: store.DecisionApproved, DecidedBy: u,
			Time: time.Now().Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	path := "/v3/projects/" + e.pid + "/chat/audit"
	var page labchanges.AuditPage
	r := e.As("alice", http.MethodGet, path+"?limit=1", nil)
	r.JSON(t, &page)
	if r.Status != http.StatusOK || len(page.Entries) != 1 || page.All || page.NextCursor == "" || r.Header.Get("X-Next-Cursor") != page.NextCursor {
		t.Fatalf("alice's first page: %d %s", r.Status, r.Body)
	}
	var args map[string]any
	if err := json.Unmarshal(page.Entries[0].Arguments, &args); err != nil || page.Entries[0].UserID != "alice" {
		t.Fatalf("entry %+v", page.Entries[0])
	}
	var rest labchanges.AuditPage
	e.As("alice", http.MethodGet, path+"?limit=5&cursor="+page.NextCursor, nil).JSON(t, &rest)
	if len(rest.Entries) != 1 || rest.Entries[0].UserID != "alice" || rest.NextCursor != "" {
		t.Fatalf("alice's second page: %+v", rest)
	}
	// Mallory sees none of it.
	var none labchanges.AuditPage
	e.As("mallory", http.MethodGet, "/v3/copilot/projects/"+e.pid+"/chat/audit", nil).JSON(t, &none)
	if len(none.Entries) != 0 {
		t.Fatalf("mallory sees %+v", none)
	}
	// The admin token sees every user's.
	var all labchanges.AuditPage
	r = e.Do(http.MethodGet, path, "Bearer "+adminToken, nil)
	r.JSON(t, &all)
	if r.Status != http.StatusOK || len(all.Entries) != 3 || !all.All {
		t.Fatalf("admin: %d %s", r.Status, r.Body)
	}
	// A GNS3 superadmin too.
	e.fake.AddUser(gns3test.User{Username: "root", Superadmin: true})
	tok := e.Token("root")
	e.fake.BindToken(tok, "root")
	var su labchanges.AuditPage
	e.Do(http.MethodGet, path, "Bearer "+tok, nil).JSON(t, &su)
	if len(su.Entries) != 3 || !su.All {
		t.Fatalf("superadmin: %+v", su)
	}
	// Bad input.
	for _, q := range []string{"?limit=0", "?limit=501", "?limit=x", "?cursor=%21%21"} {
		if r := e.As("alice", http.MethodGet, path+q, nil); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	if r := e.Do(http.MethodGet, path, "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("no credentials: %d", r.Status)
	}
	if r := e.Do(http.MethodGet, path, "Bearer "+strings.Repeat("x", 40), nil); r.Status != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", r.Status)
	}
}
