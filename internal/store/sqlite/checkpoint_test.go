package sqlite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"agentchat/internal/store"
)

// TestCheckpointsInTheBackground: every checkpointEvery commits, the
// checkpointer copies the WAL into the database file by itself. The
// writer's own checkpoints are turned off here, so that the file grows
// only through the checkpointer.
func TestCheckpointsInTheBackground(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.w.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	big := strings.Repeat("x", 2000) // each session takes pages of its own
	for i := range checkpointEvery {
		sess := &store.Session{ProjectID: "p", UserID: "u", ThreadID: fmt.Sprintf("s-%d", i), Title: store.DefaultTitle,
			Metadata: map[string]any{"note": big}}
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second) // a hang detector, not a timing assertion
	for size() <= before {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes after %d commits: the WAL was not copied", before, checkpointEvery)
		}
		time.Sleep(time.Millisecond)
	}
}
