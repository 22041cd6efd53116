package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/store"
)

// The listing, filtered or not, is one index range in listing order: no
// table scan, no sort.
func TestListQueryPlan(t *testing.T) {
	s, _ := openTemp(t)
	after := &cursor{Pinned: true, UpdatedAt: "2025-01-02T03:04:05.000000006Z", ThreadID: "t"}
	tests := []struct {
		name  string
		mode  string
		after *cursor
		index string
	}{
		{"all, first page", "", nil, "sessions_by_user"},
		{"all, next page", "", after, "sessions_by_user"},
		{"filtered, first page", "teaching_assistant", nil, "sessions_by_user_mode"},
		{"filtered, next page", "teaching_assistant", after, "sessions_by_user_mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, args := listQuery("p", "u", tc.mode, tc.after, 51)
			rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
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
			if len(plan) != 1 || !strings.Contains(text, "SEARCH sessions USING INDEX "+tc.index+" (") {
				t.Errorf("plan of %q = %q, want one SEARCH with index %s", q, text, tc.index)
			}
			if strings.Contains(text, "TEMP B-TREE") {
				t.Errorf("plan of %q sorts: %q", q, text)
			}
		})
	}
}

// Sessions written before migration 3 are listed by mode once it ran.
func TestMigrationBackfillsCopilotMode(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)
	modes := []any{"teaching_assistant", nil, "lab_automation_assistant", "teaching_assistant", 7.0, ""}
	var (
		teaching []string
		old      []store.Session
	)
	for i, m := range modes {
		ts := base.Add(time.Duration(i) * time.Minute)
		sess := &store.Session{ProjectID: "p", UserID: "u", ThreadID: string(rune('a' + i)), CreatedAt: ts, UpdatedAt: ts}
		if m != nil {
			sess.Metadata = map[string]any{store.MetadataCopilotMode: m, "client": "web"}
		}
		old = append(old, *sess)
		if m == "teaching_assistant" {
			teaching = append([]string{sess.ThreadID}, teaching...)
		}
	}
	path := createAtSchema(t, 2, old...)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open with migration 3: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	tests := []struct {
		mode string
		want []string
	}{
		{"teaching_assistant", teaching},
		{"lab_automation_assistant", []string{"c"}},
		{"7", nil},
		{"", []string{"f", "e", "d", "c", "b", "a"}},
	}
	for _, tc := range tests {
		for _, limit := range []int{1, 10} {
			var got []string
			p := store.Page{Limit: limit, CopilotMode: tc.mode}
			for {
				list, next, err := s.ListSessions(ctx, "p", "u", p)
				if err != nil {
					t.Fatalf("ListSessions(%+v): %v", p, err)
				}
				for _, x := range list {
					got = append(got, x.ThreadID)
				}
				if next == "" || len(got) > len(modes) {
					break
				}
				p.Cursor = next
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("mode %q, limit %d: listed %v, want %v", tc.mode, limit, got, tc.want)
			}
		}
	}
}
