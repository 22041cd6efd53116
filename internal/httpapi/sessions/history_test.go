package sessions_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/store"
)

// historyPage gets one history page and returns its message contents and
// the next cursor.
func historyPage(t *testing.T, e *apitest.Env, id, query string) ([]string, string) {
	t.Helper()
	r := e.As("alice", http.MethodGet, base("/sessions/"+id+"/history"+query), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("history%s: %d %s", query, r.Status, r.Body)
	}
	var h sessions.ConversationHistory
	r.JSON(t, &h)
	var out []string
	for _, m := range h.Messages {
		out = append(out, m.Content)
	}
	return out, r.Header.Get(sessions.HeaderNextCursor)
}

// TestHistoryPaging: a long session is read in pages, newest first, each
// in order, walking back with X-Next-Cursor as before=; what the web UI
// asks (no parameters, or limit=100) is the last 100 messages.
func TestHistoryPaging(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 1)
	id := threadID(0)
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: id}
	var msgs []store.Message
	for i := 1; i <= 250; i++ {
		msgs = append(msgs, store.Message{Role: store.RoleUser, Content: fmt.Sprint("m", i)})
	}
	if _, err := e.Store.AppendMessages(context.Background(), k, msgs); err != nil {
		t.Fatal(err)
	}
	want := func(from, to int) string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprint("m", i))
		}
		return strings.Join(out, ",")
	}
	for _, q := range []string{"", "?limit=100"} {
		got, cursor := historyPage(t, e, id, q)
		if strings.Join(got, ",") != want(151, 250) || cursor == "" {
			t.Fatalf("history%s: %d messages %v…, cursor %q", q, len(got), got[:1], cursor)
		}
	}
	_, cursor := historyPage(t, e, id, "")
	got, cursor := historyPage(t, e, id, "?limit=100&before="+cursor)
	if strings.Join(got, ",") != want(51, 150) || cursor == "" {
		t.Fatalf("second page: %d messages, cursor %q", len(got), cursor)
	}
	got, cursor = historyPage(t, e, id, "?limit=100&before="+cursor)
	if strings.Join(got, ",") != want(1, 50) || cursor != "" {
		t.Fatalf("last page: %d messages, cursor %q", len(got), cursor)
	}
	if got, cursor = historyPage(t, e, id, "?limit=1000"); len(got) != 250 || cursor != "" {
		t.Fatalf("limit=1000: %d messages, cursor %q", len(got), cursor)
	}

	for _, tc := range []struct{ query, message string }{
		{"?limit=1001", "Query parameter 'limit' must be an integer between 1 and 1000"},
		{"?limit=0", "Query parameter 'limit' must be an integer between 1 and 1000"},
		{"?before=abc", "Query parameter 'before' must be the X-Next-Cursor value of the previous history page (a positive integer)"},
		{"?before=0", "Query parameter 'before' must be the X-Next-Cursor value of the previous history page (a positive integer)"},
		{"?before=-5", "Query parameter 'before' must be the X-Next-Cursor value of the previous history page (a positive integer)"},
		{"?before=99999999999999999999", "Query parameter 'before' must be the X-Next-Cursor value of the previous history page (a positive integer)"},
	} {
		r := e.As("alice", http.MethodGet, base("/sessions/"+id+"/history"+tc.query), nil)
		if r.Status != http.StatusUnprocessableEntity || r.Message() != tc.message {
			t.Errorf("history%s: %d %s, want 422 %q", tc.query, r.Status, r.Body, tc.message)
		}
	}
}

// TestHistoryByteBound: a page stops before passing HistoryMaxBytes of
// text (keeping at least one message), so a session of large messages is
// never answered whole.
func TestHistoryByteBound(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 1)
	id := threadID(0)
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: id}
	third := sessions.HistoryMaxBytes/2 - 1000 // two fit in a page, three do not
	var msgs []store.Message
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		msgs = append(msgs, store.Message{Role: store.RoleAssistant, Content: c + strings.Repeat(".", third)})
	}
	big := store.Message{Role: store.RoleTool, ToolCallID: "call_1", Content: "f" + strings.Repeat(".", sessions.HistoryMaxBytes)}
	if _, err := e.Store.AppendMessages(context.Background(), k, append(msgs, big)); err != nil {
		t.Fatal(err)
	}
	first := func(got []string) string {
		var out []string
		for _, c := range got {
			out = append(out, c[:1])
		}
		return strings.Join(out, ",")
	}
	var pages []string
	cursor := ""
	for {
		q := "?limit=1000"
		if cursor != "" {
			q += "&before=" + cursor
		}
		var got []string
		got, cursor = historyPage(t, e, id, q)
		pages = append(pages, first(got))
		if cursor == "" {
			break
		}
		if len(pages) > 6 {
			t.Fatal("paging does not end")
		}
	}
	// The oversized newest message comes alone, then pages of two.
	if got := strings.Join(pages, " | "); got != "f | d,e | b,c | a" {
		t.Fatalf("pages %q, want %q", got, "f | d,e | b,c | a")
	}
}
