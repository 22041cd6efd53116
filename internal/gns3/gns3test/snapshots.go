package gns3test

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// FakeSnapshot is a snapshot the fake took: its GNS3 fields and the
// project's nodes and links at that moment (deep copies).
type FakeSnapshot struct {
	SnapshotID string
	ProjectID  string
	Name       string
	CreatedAt  int64
	Nodes      []map[string]any
	Links      []map[string]any
}

// snapshotState is what the fake knows of snapshots.
type snapshotState struct {
	byProject map[string][]*FakeSnapshot
	restored  map[string][]string // project id -> snapshot ids restored, in order
}

func newSnapshotState() *snapshotState {
	return &snapshotState{byProject: map[string][]*FakeSnapshot{}, restored: map[string][]string{}}
}

// registerSnapshotRoutes adds the snapshot routes of GNS3 v3
// (gns3server/api/routes/controller/snapshots.py).
func (s *Server) registerSnapshotRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v3/projects/{project_id}/snapshots", s.listSnapshots)
	mux.HandleFunc("POST /v3/projects/{project_id}/snapshots", s.createSnapshot)
	mux.HandleFunc("POST /v3/projects/{project_id}/snapshots/{snapshot_id}/restore", s.restoreSnapshot)
}

// snapshotPrivilege is the privilege of a snapshot route.
func snapshotPrivilege(method string, parts []string) string {
	switch {
	case method == http.MethodGet:
		return "Snapshot.Audit"
	case parts[len(parts)-1] == "restore":
		return "Snapshot.Restore"
	}
	return "Snapshot.Allocate"
}

// copyItems copies JSON-shaped items.
func copyItems(items []map[string]any) []map[string]any {
	b, _ := json.Marshal(items) // JSON-shaped values always marshal
	out := []map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}

func (f *FakeSnapshot) asJSON() map[string]any {
	return map[string]any{"snapshot_id": f.SnapshotID, "project_id": f.ProjectID, "name": f.Name, "description": "",
		"filename": strings.ReplaceAll(f.Name, " ", "_") + ".gns3project", "created_at": f.CreatedAt}
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	out := []map[string]any{}
	for _, f := range s.snaps.byProject[pid] {
		out = append(out, f.asJSON())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	name, _ := body["name"].(string)
	if name == "" {
		validationError(w, "body -> name", "field required (type=value_error.missing)")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	for _, f := range s.snaps.byProject[pid] {
		if f.Name == name {
			writeMessage(w, http.StatusConflict, "The snapshot name %s already exists", name)
			return
		}
	}
	s.settle()
	f := &FakeSnapshot{SnapshotID: uuid.NewString(), ProjectID: pid, Name: name, CreatedAt: s.now().Unix(),
		Nodes: copyItems(s.nodes[pid]), Links: copyItems(s.links[pid])}
	s.snaps.byProject[pid] = append(s.snaps.byProject[pid], f)
	writeJSON(w, http.StatusCreated, f.asJSON())
}

// restoreSnapshot puts the snapshot's nodes (stopped, as GNS3 reopens a
// restored project) and links back and answers 201 with the project.
func (s *Server) restoreSnapshot(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	id := r.PathValue("snapshot_id")
	if !validID(w, "snapshot_id", id) {
		return
	}
	for _, f := range s.snaps.byProject[pid] {
		if f.SnapshotID != id {
			continue
		}
		nodes := copyItems(f.Nodes)
		for _, n := range nodes {
			n["status"] = "stopped"
			delete(s.pending, n["node_id"].(string))
		}
		s.nodes[pid] = nodes
		s.links[pid] = copyItems(f.Links)
		s.snaps.restored[pid] = append(s.snaps.restored[pid], id)
		writeJSON(w, http.StatusCreated, s.projects[pid])
		return
	}
	writeMessage(w, http.StatusNotFound, "Snapshot ID %s doesn't exist", id)
}

// Snapshots returns the snapshots taken of the project, oldest first.
func (s *Server) Snapshots(projectID string) []FakeSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]FakeSnapshot, 0, len(s.snaps.byProject[projectID]))
	for _, f := range s.snaps.byProject[projectID] {
		out = append(out, *f)
	}
	return out
}

// Restores returns the ids of the snapshots restored in the project, in
// order.
func (s *Server) Restores(projectID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.snaps.restored[projectID]...)
}
