package sqlite

import (
	"context"
	"fmt"
	"os"
	"runtime"
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
	// Let a checkpoint that Open's own commits started finish first.
	before, runs := size(), s.checkpoints.runs.Load()
	big := strings.Repeat("x", 2000) // each session takes pages of its own
	for i := range checkpointEvery {
		sess := &store.Session{ProjectID: "p", UserID: "u", ThreadID: fmt.Sprintf("s-%d", i), Title: store.DefaultTitle,
			Metadata: map[string]any{"note": big}}
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second) // a hang detector, not a timing assertion
	for s.checkpoints.runs.Load() == runs {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after %d commits", checkpointEvery)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if after := size(); after <= before {
		t.Fatalf("database file %d bytes after the checkpoint, %d before: the WAL was not copied", after, before)
	}
}
