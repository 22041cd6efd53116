package sqlite

import (
	"strings"
	"testing"
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
