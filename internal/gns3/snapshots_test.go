package gns3_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

func TestSnapshotCreateListRestore(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	before, err := l.c.GetNodes(ctx, tokAlice, l.pid)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := l.c.CreateSnapshot(ctx, tokAlice, l.pid, "copilot before changes 2026-12-03T09:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if !gns3.ValidID(snap.SnapshotID) || snap.ProjectID != l.pid || snap.Name != "copilot before changes 2026-12-03T09:00:00Z" || snap.CreatedAt == 0 {
		t.Fatalf("snapshot %+v", snap)
	}
	// A change after the snapshot, then the restore brings the node back.
	if err := l.c.DeleteNode(ctx, tokAlice, l.pid, before[0].NodeID); err != nil {
		t.Fatal(err)
	}
	list, err := l.c.ListSnapshots(ctx, tokAlice, l.pid)
	if err != nil || len(list) != 1 || list[0].SnapshotID != snap.SnapshotID {
		t.Fatalf("ListSnapshots = %+v, %v", list, err)
	}
	p, err := l.c.RestoreSnapshot(ctx, tokAlice, l.pid, snap.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	if p.ProjectID != l.pid {
		t.Fatalf("restore answered project %+v", p)
	}
	after, err := l.c.GetNodes(ctx, tokAlice, l.pid)
	if err != nil || len(after) != len(before) {
		t.Fatalf("after the restore: %d nodes, %v; want %d", len(after), err, len(before))
	}
	if got := l.fake.Restores(l.pid); len(got) != 1 || got[0] != snap.SnapshotID {
		t.Fatalf("fake saw restores %v", got)
	}
}

func TestSnapshotErrors(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	if _, err := l.c.CreateSnapshot(ctx, tokAlice, l.pid, "dup"); err != nil {
		t.Fatal(err)
	}
	_, err := l.c.CreateSnapshot(ctx, tokAlice, l.pid, "dup")
	wantStatus(t, err, http.StatusConflict, "already exists", false)

	_, err = l.c.RestoreSnapshot(ctx, tokAlice, l.pid, missingID)
	wantStatus(t, err, http.StatusNotFound, "Snapshot ID", false)

	_, err = l.c.CreateSnapshot(ctx, tokAlice, missingID, "x")
	wantStatus(t, err, http.StatusNotFound, "", true)

	l.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Snapshot.Allocate", "Snapshot.Restore"))
	_, err = l.c.CreateSnapshot(ctx, tokAlice, l.pid, "no right")
	wantStatus(t, err, http.StatusForbidden, "Snapshot.Allocate", false)
	_, err = l.c.RestoreSnapshot(ctx, tokAlice, l.pid, missingID)
	wantStatus(t, err, http.StatusForbidden, "Snapshot.Restore", false)
}

// TestSnapshotRefusedInput: names and ids that must never reach GNS3 are
// refused before any request.
func TestSnapshotRefusedInput(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	n := l.fake.Requests()
	for _, name := range []string{"", "  ", "a\nb", "x\x1b[2J", strings.Repeat("n", 201), "\xff"} {
		if _, err := l.c.CreateSnapshot(ctx, tokAlice, l.pid, name); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	if _, err := l.c.RestoreSnapshot(ctx, tokAlice, l.pid, "../../projects"); !errors.Is(err, gns3.ErrInvalidID) {
		t.Errorf("a path as snapshot id: %v, want ErrInvalidID", err)
	}
	if _, err := l.c.ListSnapshots(ctx, tokAlice, "x/../y"); !errors.Is(err, gns3.ErrInvalidID) {
		t.Errorf("a path as project id: %v, want ErrInvalidID", err)
	}
	if got := l.fake.Requests(); got != n {
		t.Fatalf("%d requests reached GNS3", got-n)
	}
}
