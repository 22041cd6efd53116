package sqlite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"agentchat/internal/manualclock"
	"agentchat/internal/store"
)

// The counts of the limits read one index range each, never the table.
func TestLimitQueryPlan(t *testing.T) {
	s, _ := openTemp(t)
	tests := []struct {
		name  string
		query string
		args  []any
		index string
	}{
		{"llm configs", limitLLMConfigsQuery, []any{"U", "u"}, "llm_configs_by_owner"},
		{"api keys", limitAPIKeysQuery, []any{"u", "2025-01-01T00:00:00.000000000Z"}, "api_keys_by_user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := limitQuery(tc.query)
			rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, append(tc.args, 101)...)
			if err != nil {
				t.Fatalf("explain %s: %v", q, err)
			}
			defer func() { _ = rows.Close() }()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatalf("scan plan: %v", err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("read plan: %v", err)
			}
			text := strings.Join(plan, "; ")
			if !strings.Contains(text, "USING INDEX "+tc.index+" (") && !strings.Contains(text, "USING COVERING INDEX "+tc.index+" (") {
				t.Errorf("plan of %q = %q, want a search of index %s", q, text, tc.index)
			}
		})
	}
}

// TestSessionRoomCached: a count of the user's sessions that leaves room
// is trusted for readTTL, also the one this Store's own creation read; one
// without room is read again, so a session deleted meanwhile (here by
// another process on the same file) leaves room at once. What the cache
// misses, sessions another process created within readTTL, the creation
// itself still refuses.
func TestSessionRoomCached(t *testing.T) {
	ctx := context.Background()
	clock := manualclock.New(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	opts := []Option{WithClock(clock.Now), WithLimits(store.Limits{SessionsPerUser: 3})}
	s, path := openTemp(t, opts...)
	other, err := Open(ctx, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	create := func(st *Store, id string) error {
		return st.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: "alice", ThreadID: id, Title: store.DefaultTitle})
	}
	room := func(st *Store) error { return st.CheckSessionRoom(ctx, "alice") }
	isLimit := func(err error) bool {
		var le *store.LimitError
		return errors.As(err, &le) && le.Resource == store.ResourceSessions
	}
	for _, id := range []string{"s1", "s2"} {
		if err := create(s, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := room(s); err != nil {
		t.Fatalf("two of three sessions: %v", err)
	}
	if err := create(other, "s3"); err != nil {
		t.Fatal(err)
	}
	// s counted two with its last creation: it has not read the third.
	if err := room(s); err != nil {
		t.Fatalf("within the cache's time: %v, want room (the count of s's own creation)", err)
	}
	if err := create(s, "s4"); !isLimit(err) {
		t.Fatalf("creation over the limit: %v, want the sessions' LimitError", err)
	}
	clock.Add(readTTL)
	if err := room(s); !isLimit(err) {
		t.Fatalf("after the cache's time: %v, want the sessions' LimitError", err)
	}
	if err := other.DeleteSession(ctx, store.Key{ProjectID: "p", UserID: "alice", ThreadID: "s3"}); err != nil {
		t.Fatal(err)
	}
	if err := room(s); err != nil {
		t.Fatalf("a count without room is read again: %v, want room after the delete", err)
	}
	if err := room(other); err != nil {
		t.Fatalf("the other process: %v", err)
	}
}
