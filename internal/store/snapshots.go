package store

import (
	"encoding/json"
	"time"
)

// MetadataLastSnapshot is the Session.Metadata key of the GNS3 snapshot
// taken before the session's last lab changes (a SnapshotRecord), which
// the undo route restores; absent when none was taken.
const MetadataLastSnapshot = "last_snapshot"

// SnapshotRecord is a GNS3 project snapshot taken by a turn.
type SnapshotRecord struct {
	SnapshotID string    `json:"snapshot_id"`
	Name       string    `json:"name"`
	TurnID     string    `json:"turn_id,omitempty"`
	TakenAt    time.Time `json:"taken_at"`
	// RestoredAt is when the undo route last restored it (zero: never).
	RestoredAt time.Time `json:"restored_at,omitzero"`
}

// LastSnapshot returns the session's last snapshot, decoded from
// Metadata[MetadataLastSnapshot]; nil when absent or unreadable.
func (s *Session) LastSnapshot() *SnapshotRecord {
	v, ok := s.Metadata[MetadataLastSnapshot]
	if !ok || v == nil {
		return nil
	}
	if r, ok := v.(SnapshotRecord); ok {
		return &r
	}
	if r, ok := v.(*SnapshotRecord); ok {
		return r
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var r SnapshotRecord
	if json.Unmarshal(b, &r) != nil || r.SnapshotID == "" {
		return nil
	}
	return &r
}
