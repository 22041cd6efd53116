package gns3

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxSnapshotName is the longest snapshot name sent to GNS3, in runes.
const maxSnapshotName = 200

// Snapshot is a GNS3 project snapshot: the project file and the files of
// its nodes (saved configurations, disks) at the time it was taken, as
// GNS3 v3 describes it (schemas.Snapshot).
type Snapshot struct {
	SnapshotID  string `json:"snapshot_id"`
	ProjectID   string `json:"project_id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Filename    string `json:"filename,omitempty"`
	// CreatedAt is GNS3's UTC timestamp, in seconds.
	CreatedAt int64 `json:"created_at"`
}

// CreateSnapshot takes a snapshot of the project named name (POST
// /v3/projects/{p}/snapshots {"name"}; GNS3 answers 201 with it, 409 when a
// snapshot of that name exists, 403 without Snapshot.Allocate). A name that
// is empty, longer than 200 runes or holds control characters is refused
// before any request.
func (c *Client) CreateSnapshot(ctx context.Context, token, projectID, name string) (*Snapshot, error) {
	p, err := projectPath(projectID)
	if err != nil {
		return nil, err
	}
	if err := checkSnapshotName(name); err != nil {
		return nil, err
	}
	in := struct {
		Name string `json:"name"`
	}{name}
	var out Snapshot
	if err := c.Do(ctx, token, http.MethodPost, p+"/snapshots", in, &out); err != nil {
		return nil, projectErr(projectID, err)
	}
	return &out, nil
}

// ListSnapshots returns the project's snapshots, oldest first (GET
// /v3/projects/{p}/snapshots).
func (c *Client) ListSnapshots(ctx context.Context, token, projectID string) ([]Snapshot, error) {
	p, err := projectPath(projectID)
	if err != nil {
		return nil, err
	}
	out := []Snapshot{}
	if err := c.Do(ctx, token, http.MethodGet, p+"/snapshots", nil, &out); err != nil {
		return nil, projectErr(projectID, err)
	}
	return out, nil
}

// RestoreSnapshot restores the project from a snapshot (POST
// /v3/projects/{p}/snapshots/{s}/restore; GNS3 closes the project, puts
// back the snapshot's files, reopens it and answers 201 with the project,
// which is returned). An unknown snapshot is an ErrNotFound.
func (c *Client) RestoreSnapshot(ctx context.Context, token, projectID, snapshotID string) (*Project, error) {
	p, err := itemPath(projectID, "snapshots", "snapshot", snapshotID)
	if err != nil {
		return nil, err
	}
	var out Project
	if err := c.Do(ctx, token, http.MethodPost, p+"/restore", struct{}{}, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// checkSnapshotName refuses names GNS3 should never be sent.
func checkSnapshotName(name string) error {
	if strings.TrimSpace(name) == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > maxSnapshotName ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("gns3: invalid snapshot name %q", shorten(name))
	}
	return nil
}
