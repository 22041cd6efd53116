package sqlite

import (
	"context"
	"errors"
	"testing"

	"agentchat/internal/store"
)

// storedCounts returns user_session_counts next to a count of the
// sessions table, user by user (users with neither are left out).
func storedCounts(t *testing.T, s *Store) (kept, counted map[string]int64) {
	t.Helper()
	read := func(q string) map[string]int64 {
		rows, err := s.r.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer func() { _ = rows.Close() }()
		out := map[string]int64{}
		for rows.Next() {
			var u string
			var n int64
			if err := rows.Scan(&u, &n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				out[u] = n
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return read(`SELECT user_id, sessions FROM user_session_counts`),
		read(`SELECT user_id, COUNT(*) FROM sessions GROUP BY user_id`)
}

// The triggers keep each user's session count equal to a count of the
// table through creations, deletions and a project's removal.
func TestSessionCountsFollowSessions(t *testing.T) {
	ctx := context.Background()
	type op struct {
		create []store.Key
		delete []store.Key
		// deleteProject removes a project's sessions.
		deleteProject string
	}
	k := func(p, u, id string) store.Key { return store.Key{ProjectID: p, UserID: u, ThreadID: id} }
	tests := []struct {
		name string
		ops  []op
		want map[string]int64
	}{
		{"creations", []op{{create: []store.Key{k("p", "a", "1"), k("p", "a", "2"), k("q", "a", "3"), k("p", "b", "4")}}},
			map[string]int64{"a": 3, "b": 1}},
		{"deletions", []op{
			{create: []store.Key{k("p", "a", "1"), k("p", "a", "2"), k("p", "b", "3")}},
			{delete: []store.Key{k("p", "a", "1"), k("p", "b", "3")}},
		}, map[string]int64{"a": 1}},
		{"project removed", []op{
			{create: []store.Key{k("p", "a", "1"), k("q", "a", "2"), k("p", "b", "3")}},
			{deleteProject: "p"},
		}, map[string]int64{"a": 1}},
		{"created again", []op{
			{create: []store.Key{k("p", "a", "1")}},
			{delete: []store.Key{k("p", "a", "1")}},
			{create: []store.Key{k("p", "a", "1"), k("p", "a", "2")}},
		}, map[string]int64{"a": 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t)
			for _, o := range tc.ops {
				for _, key := range o.create {
					if err := s.CreateSession(ctx, &store.Session{ProjectID: key.ProjectID, UserID: key.UserID, ThreadID: key.ThreadID, Title: "t"}); err != nil {
						t.Fatalf("CreateSession %v: %v", key, err)
					}
				}
				for _, key := range o.delete {
					if err := s.DeleteSession(ctx, key); err != nil {
						t.Fatalf("DeleteSession %v: %v", key, err)
					}
				}
				if o.deleteProject != "" {
					if err := s.DeleteProject(ctx, o.deleteProject); err != nil {
						t.Fatalf("DeleteProject %s: %v", o.deleteProject, err)
					}
				}
			}
			kept, counted := storedCounts(t, s)
			if !equalCounts(kept, tc.want) || !equalCounts(counted, tc.want) {
				t.Errorf("counts kept %v, counted %v, want %v", kept, counted, tc.want)
			}
		})
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Migration 13 counts the sessions a database already holds, and the
// limit applies to them at once.
func TestMigrationCountsSessions(t *testing.T) {
	ctx := context.Background()
	path := createAtSchema(t, 12,
		store.Session{ProjectID: "p", UserID: "a", ThreadID: "1", Title: "t"},
		store.Session{ProjectID: "q", UserID: "a", ThreadID: "2", Title: "t"},
		store.Session{ProjectID: "p", UserID: "b", ThreadID: "3", Title: "t"},
	)
	s, err := Open(ctx, path, WithLimits(store.Limits{SessionsPerUser: 2}))
	if err != nil {
		t.Fatalf("Open with migration 13: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	kept, counted := storedCounts(t, s)
	want := map[string]int64{"a": 2, "b": 1}
	if !equalCounts(kept, want) || !equalCounts(counted, want) {
		t.Errorf("counts kept %v, counted %v, want %v", kept, counted, want)
	}
	var le *store.LimitError
	if err := s.CheckSessionRoom(ctx, "a"); !errors.As(err, &le) {
		t.Errorf("CheckSessionRoom(a) at the limit = %v, want a *store.LimitError", err)
	}
	if err := s.CheckSessionRoom(ctx, "b"); err != nil {
		t.Errorf("CheckSessionRoom(b) below the limit = %v", err)
	}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: "a", ThreadID: "4", Title: "t"}); !errors.As(err, &le) {
		t.Errorf("CreateSession past the limit = %v, want a *store.LimitError", err)
	}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: "b", ThreadID: "5", Title: "t"}); err != nil {
		t.Errorf("CreateSession at the limit: %v", err)
	}
}
