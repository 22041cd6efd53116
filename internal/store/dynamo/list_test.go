package dynamo

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// The copilot mode is copied onto the meta item as its own string
// attribute, and only when the metadata holds a non-empty string there.
func TestCopilotModeAttribute(t *testing.T) {
	tests := []struct {
		name     string
		metadata map[string]any
		want     string // "" means no attribute
	}{
		{"no metadata", nil, ""},
		{"other keys", map[string]any{"client": "web"}, ""},
		{"teaching", map[string]any{store.MetadataCopilotMode: "teaching_assistant"}, "teaching_assistant"},
		{"automation and more", map[string]any{store.MetadataCopilotMode: "lab_automation_assistant", "client": "web"}, "lab_automation_assistant"},
		{"empty string", map[string]any{store.MetadataCopilotMode: ""}, ""},
		{"not a string", map[string]any{store.MetadataCopilotMode: 2.0}, ""},
		{"nested", map[string]any{"x": map[string]any{store.MetadataCopilotMode: "teaching_assistant"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := sessionItem(&store.Session{ProjectID: "p", UserID: "u", ThreadID: "t", Metadata: tc.metadata})
			if err != nil {
				t.Fatalf("sessionItem: %v", err)
			}
			_, has := it[aCopilotMode]
			if got := getS(it, aCopilotMode); got != tc.want || has != (tc.want != "") {
				t.Errorf("copilot_mode attribute = %q (present %v), want %q", got, has, tc.want)
			}
		})
	}
}

// A filtered listing keeps querying past pages of non-matching sessions,
// evaluating twice as many items each time (up to filterScanMax); an
// unfiltered one asks for exactly one item beyond the page.
func TestFilteredListingQueries(t *testing.T) {
	var (
		mu     sync.Mutex
		limits []int32
	)
	s := newObservedStore(t, "", func(op string, in any) error {
		if q, ok := in.(*dynamodb.QueryInput); ok && op == "Query" {
			mu.Lock()
			limits = append(limits, *q.Limit)
			mu.Unlock()
		}
		return nil
	}, nil)
	ctx := t.Context()
	base := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	// The two oldest sessions are in automation mode, the 40 newer ones
	// in teaching mode.
	var automation []string
	for i := range 42 {
		mode := "teaching_assistant"
		if i < 2 {
			mode = "lab_automation_assistant"
		}
		ts := base.Add(time.Duration(i) * time.Second)
		sess := &store.Session{ProjectID: "p", UserID: "u", ThreadID: uuid.NewString(), CreatedAt: ts, UpdatedAt: ts,
			Metadata: map[string]any{store.MetadataCopilotMode: mode}}
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		if i < 2 {
			automation = append([]string{sess.ThreadID}, automation...)
		}
	}
	tests := []struct {
		name       string
		page       store.Page
		wantIDs    []string // nil: not checked
		wantNext   bool
		wantLimits []int32
	}{
		{"unfiltered", store.Page{Limit: 5}, nil, true, []int32{6}},
		{"filtered, first match far down", store.Page{Limit: 1, CopilotMode: "lab_automation_assistant"},
			automation[:1], true, []int32{2, 4, 8, 16, 32}},
		{"filtered, all matches", store.Page{Limit: 2, CopilotMode: "lab_automation_assistant"},
			automation, false, []int32{3, 6, 12, 24}},
		{"filtered, page full at once", store.Page{Limit: 3, CopilotMode: "teaching_assistant"}, nil, true, []int32{4}},
		{"filtered, large page", store.Page{Limit: 1000, CopilotMode: "lab_automation_assistant"},
			automation, false, []int32{1001}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			limits = nil
			mu.Unlock()
			list, next, err := s.ListSessions(ctx, "p", "u", tc.page)
			if err != nil {
				t.Fatalf("ListSessions(%+v): %v", tc.page, err)
			}
			ids := make([]string, len(list))
			for i := range list {
				ids[i] = list[i].ThreadID
			}
			if tc.wantIDs != nil && !slices.Equal(ids, tc.wantIDs) {
				t.Errorf("sessions = %v, want %v", ids, tc.wantIDs)
			}
			if (next != "") != tc.wantNext {
				t.Errorf("next cursor = %q, want one: %v", next, tc.wantNext)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(limits, tc.wantLimits) {
				t.Errorf("query limits = %v, want %v", limits, tc.wantLimits)
			}
		})
	}
}
