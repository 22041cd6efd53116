package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"agentchat/internal/store"
)

// createAtSchema makes a database file at schema version (the first
// version migrations) holding sessions, written with the columns of the
// first schema, as a program of that version left it: today's Store
// cannot open it before migrating (its statements name later columns).
func createAtSchema(t *testing.T, version int, sessions ...store.Session) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= version; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
			t.Fatalf("migration %d: %v", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, '2025-01-01T00:00:00Z')`, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sessions {
		if s.CreatedAt.IsZero() {
			s.CreatedAt = time.Now().UTC()
		}
		if s.UpdatedAt.IsZero() {
			s.UpdatedAt = s.CreatedAt
		}
		created, err := encTime(s.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		updated, err := encTime(s.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := encJSON(s.Metadata)
		if err != nil {
			t.Fatal(err)
		}
		title := s.Title
		if title == "" {
			title = store.DefaultTitle
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (project_id, thread_id, user_id, title, metadata, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`, s.ProjectID, s.ThreadID, s.UserID, title, meta, created, updated); err != nil {
			t.Fatalf("insert session at schema %d: %v", version, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}
