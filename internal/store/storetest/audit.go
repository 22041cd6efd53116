package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"agentchat/internal/store"
)

// auditTests are the conformance tests of store.AuditLog and
// store.SessionMetadata (the pending approvals of a paused turn).
var auditTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"AuditOrderAndPaging", testAuditOrderAndPaging},
	{"AuditPerUser", testAuditPerUser},
	{"AuditInvalid", testAuditInvalid},
	{"AuditDeletedWithProject", testAuditDeletedWithProject},
	{"SessionMetadataUpdate", testSessionMetadataUpdate},
	{"PendingApprovalsRoundTrip", testPendingApprovalsRoundTrip},
}

// appendAudit stores n entries of user in project, one second apart from
// base, and returns their ids in order of time.
func appendAudit(t *testing.T, s store.Store, project, user string, base time.Time, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		e := &store.AuditEntry{ProjectID: project, UserID: user, ThreadID: "th", Tool: "start_gns3_node",
			Arguments: fmt.Sprintf(`{"nodes":["R%d"]}`, i), Summary: fmt.Sprintf("start R%d", i), Status: store.AuditSuccess,
			Decision: store.DecisionApproved, DecidedBy: user, SnapshotID: "snap-1", Time: base.Add(time.Duration(i) * time.Second)}
		if err := s.AppendAudit(context.Background(), e); err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
		if e.ID == "" {
			t.Fatal("AppendAudit left the id empty")
		}
		ids[i] = e.ID
	}
	return ids
}

// listAllAudit pages through the listing with limit and returns the ids.
func listAllAudit(t *testing.T, s store.Store, project, user string, limit int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		page, next, err := s.ListAudit(context.Background(), project, user, store.Page{Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatalf("ListAudit: %v", err)
		}
		if len(page) > limit {
			t.Fatalf("page of %d entries, limit %d", len(page), limit)
		}
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
	t.Fatal("listing never ended")
	return nil
}

func testAuditOrderAndPaging(t *testing.T, s store.Store) {
	ctx := context.Background()
	project := newProject()
	base := time.Date(2026, 12, 3, 9, 0, 0, 123456789, time.UTC)
	ids := appendAudit(t, s, project, "alice", base, 7)
	got := listAllAudit(t, s, project, "alice", 3)
	if len(got) != len(ids) {
		t.Fatalf("listed %d entries, want %d", len(got), len(ids))
	}
	for i := range ids {
		if got[i] != ids[len(ids)-1-i] {
			t.Fatalf("entry %d is %s, want %s (newest first)", i, got[i], ids[len(ids)-1-i])
		}
	}
	page, next, err := s.ListAudit(ctx, project, "alice", store.Page{Limit: 7})
	if err != nil || next != "" || len(page) != 7 {
		t.Fatalf("a page holding everything: %d entries, next %q, %v", len(page), next, err)
	}
	e := page[0]
	if e.Tool != "start_gns3_node" || e.Summary != "start R6" || e.Arguments != `{"nodes":["R6"]}` || e.Status != store.AuditSuccess ||
		e.Decision != store.DecisionApproved || e.DecidedBy != "alice" || e.SnapshotID != "snap-1" || e.ThreadID != "th" ||
		e.ProjectID != project || e.UserID != "alice" || !e.Time.Equal(base.Add(6*time.Second)) {
		t.Fatalf("entry read back as %+v", e)
	}
}

func testAuditPerUser(t *testing.T, s store.Store) {
	project := newProject()
	base := time.Now().UTC().Add(-time.Hour)
	alice := appendAudit(t, s, project, "alice", base, 3)
	bob := appendAudit(t, s, project, "bob", base.Add(500*time.Millisecond), 4)
	appendAudit(t, s, newProject(), "alice", base, 2) // another project
	if got := listAllAudit(t, s, project, "alice", 2); len(got) != len(alice) {
		t.Fatalf("alice sees %d entries, want her %d", len(got), len(alice))
	}
	if got := listAllAudit(t, s, project, "bob", 1); len(got) != len(bob) {
		t.Fatalf("bob sees %d entries, want his %d", len(got), len(bob))
	}
	if got := listAllAudit(t, s, project, "mallory", 5); len(got) != 0 {
		t.Fatalf("a user without entries sees %d", len(got))
	}
	all := listAllAudit(t, s, project, "", 2)
	if len(all) != len(alice)+len(bob) {
		t.Fatalf("the whole project lists %d entries, want %d", len(all), len(alice)+len(bob))
	}
	// Interleaved times: bob's first (base+0.5s) comes between alice's
	// first two, newest first.
	if all[len(all)-1] != alice[0] || all[len(all)-2] != bob[0] {
		t.Fatalf("oldest entries are %v, want bob's first then alice's first", all[len(all)-2:])
	}
}

func testAuditInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	project := newProject()
	appendAudit(t, s, project, "alice", time.Now(), 1)
	for _, c := range []string{"!!", "bm90IGEgY3Vyc29y", "MjAyNi0xMi0wM1QwOTowMDowMC4wMDAwMDAwMDBa"} {
		if _, _, err := s.ListAudit(ctx, project, "alice", store.Page{Limit: 5, Cursor: c}); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("cursor %q: %v, want ErrInvalidCursor", c, err)
		}
	}
	for _, l := range []int{0, 1001} {
		if _, _, err := s.ListAudit(ctx, project, "alice", store.Page{Limit: l}); err == nil {
			t.Errorf("limit %d accepted", l)
		}
	}
	for _, e := range []store.AuditEntry{{UserID: "u", Tool: "t"}, {ProjectID: "p", Tool: "t"}, {ProjectID: "p", UserID: "u"}} {
		if err := s.AppendAudit(ctx, &e); err == nil {
			t.Errorf("entry %+v accepted without a required field", e)
		}
	}
}

func testAuditDeletedWithProject(t *testing.T, s store.Store) {
	ctx := context.Background()
	project, other := newProject(), newProject()
	create(t, s, newKey(project, "alice"), nil)
	appendAudit(t, s, project, "alice", time.Now(), 3)
	appendAudit(t, s, other, "alice", time.Now(), 2)
	if err := s.DeleteProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	if got := listAllAudit(t, s, project, "", 10); len(got) != 0 {
		t.Fatalf("%d audit entries left after the project's removal", len(got))
	}
	if got := listAllAudit(t, s, other, "", 10); len(got) != 2 {
		t.Fatalf("another project's audit lost entries: %d left, want 2", len(got))
	}
	// A project with an audit trail and no session at all.
	appendAudit(t, s, project, "bob", time.Now(), 2)
	if err := s.DeleteProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	if got := listAllAudit(t, s, project, "", 10); len(got) != 0 {
		t.Fatalf("%d audit entries left after the removal of a project without sessions", len(got))
	}
}

func testSessionMetadataUpdate(t *testing.T, s store.Store) {
	ctx := context.Background()
	k := newKey(newProject(), "alice")
	create(t, s, k, func(sess *store.Session) {
		sess.Metadata = map[string]any{store.MetadataCopilotMode: "lab_automation_assistant", "keep": "me"}
	})
	before, err := s.GetSession(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.UpdateSessionMetadata(ctx, k, map[string]any{"approval": "changes", "keep": nil, "n": 3})
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata["approval"] != "changes" || got.Metadata["keep"] != nil || got.CopilotMode() != "lab_automation_assistant" {
		t.Fatalf("metadata after the update: %v", got.Metadata)
	}
	again, err := s.GetSession(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if again.Metadata["approval"] != "changes" || fmt.Sprint(again.Metadata["n"]) != "3" || !again.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("read back: %v, updated %v (was %v)", again.Metadata, again.UpdatedAt, before.UpdatedAt)
	}
	// The mode stays what the session was created in.
	if _, err := s.UpdateSessionMetadata(ctx, k, map[string]any{store.MetadataCopilotMode: "teaching_assistant"}); err == nil {
		t.Fatal("the copilot mode was changed through the metadata")
	}
	// Another user's session, and a missing one.
	other := k
	other.UserID = "mallory"
	if _, err := s.UpdateSessionMetadata(ctx, other, map[string]any{"approval": "off"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another user's session: %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateSessionMetadata(ctx, newKey(k.ProjectID, "alice"), map[string]any{"a": 1}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a missing session: %v, want ErrNotFound", err)
	}
	// Concurrent updates of different keys all land.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := s.UpdateSessionMetadata(ctx, k, map[string]any{fmt.Sprintf("k%d", i): i})
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	final, err := s.GetSession(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if _, ok := final.Metadata[fmt.Sprintf("k%d", i)]; !ok {
			t.Fatalf("concurrent update k%d lost: %v", i, final.Metadata)
		}
	}
}

func testPendingApprovalsRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	at := time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC)
	pending := []store.PendingApproval{
		{ToolCallID: "call_1", ToolName: "execute_multiple_device_config_commands", Arguments: `{"device_configs":[]}`,
			Summary: "configure R1: `hostname X`", TurnID: "turn-1", RequestedAt: at},
		{ToolCallID: "call_2", ToolName: "delete_gns3_node", Arguments: `{"nodes":["R2"]}`, Summary: "delete R2", RequestedAt: at},
	}
	if _, err := s.UpdateSessionMetadata(ctx, k, map[string]any{store.MetadataPendingApprovals: pending}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSession(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	p := got.PendingApprovals()
	if len(p) != 2 || p[0] != pending[0] || p[1] != pending[1] {
		t.Fatalf("pending approvals read back as %+v", p)
	}
	if _, err := s.UpdateSessionMetadata(ctx, k, map[string]any{store.MetadataPendingApprovals: nil}); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetSession(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if p := got.PendingApprovals(); len(p) != 0 {
		t.Fatalf("pending approvals left after clearing: %+v", p)
	}
}
