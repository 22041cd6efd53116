package sessions_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"agentchat/internal/agents/catalog"
	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/httpapi/views"
	"agentchat/internal/store"
)

const project = "9f1d8e4a-5b6c-4d7e-8f90-a1b2c3d4e5f6"

func routes(st store.Store, a *auth.Authenticator) []httpapi.Route {
	h := sessions.New(st, nil, sessions.RemovalPolicy{Auth: a})
	return append(h.Routes(), h.RemovalRoutes()...)
}

func newEnv(t *testing.T, opt apitest.Options) *apitest.Env {
	return apitest.New(t, opt, routes)
}

func threadID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// seed creates n sessions for user, the i-th updated i minutes after base.
func seed(t *testing.T, st store.Store, user string, n int) {
	t.Helper()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(i) * time.Minute)
		s := &store.Session{ThreadID: threadID(i), UserID: user, ProjectID: project, CreatedAt: ts, UpdatedAt: ts}
		if err := st.CreateSession(context.Background(), s); err != nil {
			t.Fatalf("create session %d: %v", i, err)
		}
	}
}

func base(p string) string { return "/v3/projects/" + project + "/chat" + p }

func TestAuthFailures(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	now := time.Now()
	sign := func(secret string, claims jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	b64 := base64.RawURLEncoding.EncodeToString
	none := b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64([]byte(fmt.Sprintf(`{"sub":"alice","exp":%d}`, now.Add(time.Hour).Unix()))) + "."
	tests := []struct {
		name, header, message string
	}{
		{"missing header", "", "Not authenticated"},
		{"other secret", "Bearer " + sign("another-secret-0123456789abcdef01234", jwt.MapClaims{"sub": "alice", "exp": now.Add(time.Hour).Unix()}), "Could not validate credentials"},
		{"expired", "Bearer " + sign(apitest.Secret, jwt.MapClaims{"sub": "alice", "exp": now.Add(-time.Hour).Unix()}), "Could not validate credentials"},
		{"no exp", "Bearer " + sign(apitest.Secret, jwt.MapClaims{"sub": "alice"}), "Could not validate credentials"},
		{"alg none", "Bearer " + none, "Could not validate credentials"},
		{"malformed header", "Token abc", "Could not validate credentials"},
		{"malformed token", "Bearer not.a.jwt", "Could not validate credentials"},
		{"empty bearer", "Bearer ", "Could not validate credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(http.MethodGet, base("/sessions"), tc.header, nil)
			if r.Status != http.StatusUnauthorized || r.Message() != tc.message {
				t.Fatalf("got %d %s, want 401 %q", r.Status, r.Body, tc.message)
			}
			if r.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
	if r := e.As("alice", http.MethodGet, base("/sessions"), nil); r.Status != http.StatusOK {
		t.Fatalf("valid token: %d %s", r.Status, r.Body)
	}
}

func TestListOrderAndPagination(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 7)
	// Pin the oldest: it must come first.
	if r := e.As("alice", http.MethodPut, base("/sessions/"+threadID(0)+"/pin"), nil); r.Status != http.StatusOK {
		t.Fatalf("pin: %d %s", r.Status, r.Body)
	}
	var got []string
	cursor := ""
	pages := 0
	for {
		path := base("/sessions?limit=3")
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.As("alice", http.MethodGet, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var page []sessions.ChatSession
		r.JSON(t, &page)
		for _, s := range page {
			got = append(got, s.ThreadID)
		}
		pages++
		cursor = r.Header.Get("X-Next-Cursor")
		if cursor == "" {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	// The pin bumped thread 0's updated_at but pinned sort first anyway.
	want := []string{threadID(0), threadID(6), threadID(5), threadID(4), threadID(3), threadID(2), threadID(1)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}
	if pages != 3 {
		t.Errorf("pages = %d, want 3", pages)
	}
}

const modeMessage = "Query parameter 'copilot_mode' must be one of: teaching_assistant, lab_automation_assistant, troubleshooting_injection"

// seedModes creates one session of user per entry of modes ("": no
// copilot_mode in the metadata), the i-th with thread id threadID(offset+i),
// updated i minutes after base.
func seedModes(t *testing.T, st store.Store, user string, offset int, modes []string) {
	t.Helper()
	base := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	for i, m := range modes {
		ts := base.Add(time.Duration(i) * time.Minute)
		s := &store.Session{ThreadID: threadID(offset + i), UserID: user, ProjectID: project, CreatedAt: ts, UpdatedAt: ts}
		if m != "" {
			s.Metadata = map[string]any{store.MetadataCopilotMode: m}
		}
		if err := st.CreateSession(context.Background(), s); err != nil {
			t.Fatalf("create session %d: %v", offset+i, err)
		}
	}
}

func TestListByCopilotMode(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	const (
		ta = catalog.ModeTeachingAssistant
		la = catalog.ModeLabAutomationAssistant
	)
	// alice: threads 0..9; bob: threads 20..21, both modes.
	seedModes(t, e.Store, "alice", 0, []string{ta, la, "", ta, "", "", la, ta, "", ta})
	seedModes(t, e.Store, "bob", 20, []string{ta, la})
	// Pin alice's oldest teaching session: it comes first.
	if r := e.As("alice", http.MethodPut, base("/sessions/"+threadID(0)+"/pin"), nil); r.Status != http.StatusOK {
		t.Fatalf("pin: %d %s", r.Status, r.Body)
	}
	ids := func(is ...int) []string {
		out := make([]string, len(is))
		for i, n := range is {
			out[i] = threadID(n)
		}
		return out
	}
	tests := []struct {
		name  string
		user  string
		query string
		want  []string
		pages int
	}{
		{"teaching, pages of 2", "alice", "copilot_mode=teaching_assistant&limit=2", ids(0, 9, 7, 3), 2},
		{"teaching, pages of 3", "alice", "copilot_mode=teaching_assistant&limit=3", ids(0, 9, 7, 3), 2},
		{"automation, pages of 1", "alice", "limit=1&copilot_mode=lab_automation_assistant", ids(6, 1), 2},
		{"automation, one page", "alice", "copilot_mode=lab_automation_assistant", ids(6, 1), 1},
		{"case and spaces ignored", "alice", "copilot_mode=%20Lab_Automation_Assistant%20&limit=1", ids(6, 1), 2},
		{"empty is no filter", "alice", "copilot_mode=&limit=4", ids(0, 9, 8, 7, 6, 5, 4, 3, 2, 1), 3},
		{"other user", "bob", "copilot_mode=teaching_assistant&limit=1", ids(20), 1},
		{"no match", "carol", "copilot_mode=teaching_assistant", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			limit := 100
			if q, err := url.ParseQuery(tc.query); err == nil && q.Get("limit") != "" {
				limit, _ = strconv.Atoi(q.Get("limit"))
			}
			var got []string
			cursor := ""
			pages := 0
			for {
				path := base("/sessions?" + tc.query)
				if cursor != "" {
					path += "&cursor=" + url.QueryEscape(cursor)
				}
				r := e.As(tc.user, http.MethodGet, path, nil)
				if r.Status != http.StatusOK {
					t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
				}
				var page []sessions.ChatSession
				r.JSON(t, &page)
				pages++
				cursor = r.Header.Get("X-Next-Cursor")
				if cursor != "" && len(page) != limit {
					t.Errorf("page %d has %d sessions and a next cursor, want a full page of %d", pages, len(page), limit)
				}
				for _, s := range page {
					got = append(got, s.ThreadID)
					if s.UserID != tc.user {
						t.Errorf("listed %s of user %s", s.ThreadID, s.UserID)
					}
				}
				if cursor == "" {
					break
				}
				if pages > 10 {
					t.Fatal("pagination does not end")
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed\n %v\nwant\n %v", got, tc.want)
			}
			if pages != tc.pages {
				t.Errorf("pages = %d, want %d", pages, tc.pages)
			}
		})
	}

	// The listed session carries its mode in metadata.
	var page []sessions.ChatSession
	e.As("alice", http.MethodGet, base("/sessions?copilot_mode=lab_automation_assistant&limit=1"), nil).JSON(t, &page)
	if len(page) != 1 || page[0].Metadata[store.MetadataCopilotMode] != la {
		t.Errorf("first automation session = %+v, want metadata.copilot_mode %q", page, la)
	}
}

func TestParseCopilotMode(t *testing.T) {
	tests := []struct {
		query   string
		want    string
		wantErr bool
	}{
		{"", "", false},
		{"copilot_mode=", "", false},
		{"copilot_mode=%20%20", "", false},
		{"copilot_mode=teaching_assistant", catalog.ModeTeachingAssistant, false},
		{"copilot_mode=LAB_AUTOMATION_ASSISTANT", catalog.ModeLabAutomationAssistant, false},
		{"copilot_mode=lab_automation_assistant&copilot_mode=x", catalog.ModeLabAutomationAssistant, false},
		{"copilot_mode=teaching_assistant_v2", "", true},
		{"copilot_mode=x&copilot_mode=teaching_assistant", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/x?"+tc.query, nil)
			got, err := sessions.ParseCopilotMode(r)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("ParseCopilotMode(%q) = %q, %v; want %q, error %v", tc.query, got, err, tc.want, tc.wantErr)
			}
			var se *httpapi.StatusError
			if err != nil && (!errors.As(err, &se) || se.Status != http.StatusUnprocessableEntity || se.Message != modeMessage) {
				t.Errorf("error = %#v, want a 422 %q", err, modeMessage)
			}
		})
	}
}

func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 2)
	id := threadID(1)
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: id}
	if _, err := e.Store.AppendMessages(context.Background(), k, []store.Message{
		{Role: store.RoleUser, Content: "show me the topology"},
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_1", Type: "function", Function: store.FunctionCall{Name: "get_topology", Arguments: "{}"}}}},
		{Role: store.RoleTool, ToolCallID: "call_1", Name: "get_topology", Content: `{"nodes":[]}`},
		{Role: store.RoleAssistant, Content: "The project is empty."},
	}); err != nil {
		t.Fatal(err)
	}

	r := e.As("alice", http.MethodPatch, base("/sessions/"+id), map[string]string{"title": "  OSPF lab  "})
	var s sessions.ChatSession
	r.JSON(t, &s)
	if r.Status != http.StatusOK || s.Title != "OSPF lab" || s.ThreadID != id || s.ProjectID != project || s.UserID != "alice" {
		t.Fatalf("rename: %d %s", r.Status, r.Body)
	}
	for _, v := range []string{s.CreatedAt, s.UpdatedAt} {
		if _, err := webUIDate(v); err != nil || !strings.HasSuffix(v, "+00:00") {
			t.Errorf("timestamp %q must be UTC with a numeric offset, as the web UI reads it (%v): %s", v, err, r.Body)
		}
	}

	r = e.As("alice", http.MethodGet, base("/sessions/"+id+"/history?limit=3"), nil)
	var h sessions.ConversationHistory
	r.JSON(t, &h)
	if r.Status != http.StatusOK || h.Title != "OSPF lab" || len(h.Messages) != 3 {
		t.Fatalf("history: %d %s", r.Status, r.Body)
	}
	if h.Messages[0].Role != "assistant" || h.Messages[0].ToolCalls[0].Function.Name != "get_topology" ||
		h.Messages[1].ToolCallID != "call_1" || h.Messages[2].Content != "The project is empty." || h.Messages[0].ID == "" {
		t.Fatalf("history messages: %s", r.Body)
	}

	for _, step := range []struct {
		method string
		pinned bool
	}{{http.MethodPut, true}, {http.MethodDelete, false}} {
		r = e.As("alice", step.method, base("/sessions/"+id+"/pin"), nil)
		r.JSON(t, &s)
		if r.Status != http.StatusOK || s.Pinned != step.pinned {
			t.Fatalf("%s pin: %d %s", step.method, r.Status, r.Body)
		}
	}

	// The copilot alias serves the same sessions.
	r = e.As("alice", http.MethodGet, "/v3/copilot/projects/"+project+"/chat/sessions", nil)
	var list []sessions.ChatSession
	r.JSON(t, &list)
	if r.Status != http.StatusOK || len(list) != 2 {
		t.Fatalf("copilot alias: %d %s", r.Status, r.Body)
	}

	if r = e.As("alice", http.MethodDelete, base("/sessions/"+id), nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r = e.As("alice", http.MethodGet, base("/sessions/"+id+"/history"), nil); r.Status != http.StatusNotFound {
		t.Fatalf("history after delete: %d %s", r.Status, r.Body)
	}
	if r = e.As("alice", http.MethodDelete, base("/sessions/"+id), nil); r.Status != http.StatusNotFound {
		t.Fatalf("second delete: %d %s", r.Status, r.Body)
	}
}

func TestOtherUserSeesNothing(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 1)
	id := threadID(0)
	requests := []struct{ method, path string }{
		{http.MethodGet, base("/sessions/" + id + "/history")},
		{http.MethodPatch, base("/sessions/" + id)},
		{http.MethodPut, base("/sessions/" + id + "/pin")},
		{http.MethodDelete, base("/sessions/" + id + "/pin")},
		{http.MethodDelete, base("/sessions/" + id)},
	}
	for _, rq := range requests {
		var body any
		if rq.method == http.MethodPatch {
			body = map[string]string{"title": "mine now"}
		}
		if r := e.As("bob", rq.method, rq.path, body); r.Status != http.StatusNotFound {
			t.Errorf("bob %s %s: %d %s, want 404", rq.method, rq.path, r.Status, r.Body)
		}
	}
	var list []sessions.ChatSession
	e.As("bob", http.MethodGet, base("/sessions"), nil).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("bob lists alice's sessions: %v", list)
	}
	s, err := e.Store.GetSession(context.Background(), store.Key{ProjectID: project, UserID: "alice", ThreadID: id})
	if err != nil || s.Title != store.DefaultTitle || s.Pinned {
		t.Fatalf("alice's session changed: %+v, %v", s, err)
	}
}

func TestValidation(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 1)
	id := threadID(0)
	tests := []struct {
		name, method, path string
		body               any
		status             int
		message            string
	}{
		{"malformed json", http.MethodPatch, base("/sessions/" + id), `{"title":`, 400, "Malformed JSON in request body"},
		{"empty body", http.MethodPatch, base("/sessions/" + id), ``, 400, "Request body must not be empty"},
		{"wrong type", http.MethodPatch, base("/sessions/" + id), `{"title": 12}`, 422, "Field 'title' must be of type string"},
		{"not an object", http.MethodPatch, base("/sessions/" + id), `["x"]`, 422, "Request body must be a JSON object"},
		{"unknown field", http.MethodPatch, base("/sessions/" + id), `{"title":"a","pinned":true}`, 422, "Unknown field 'pinned'"},
		{"two objects", http.MethodPatch, base("/sessions/" + id), `{"title":"a"}{}`, 400, "Request body must contain a single JSON object"},
		{"missing title", http.MethodPatch, base("/sessions/" + id), `{}`, 422, "Field 'title' is required"},
		{"blank title", http.MethodPatch, base("/sessions/" + id), `{"title":"   "}`, 422, "Field 'title' must not be blank"},
		{"256 chars", http.MethodPatch, base("/sessions/" + id), map[string]string{"title": strings.Repeat("é", 256)}, 422, "Field 'title' must be at most 255 characters (got 256)"},
		{"oversize body", http.MethodPatch, base("/sessions/" + id), `{"title":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "Request body must not be larger than 1048576 bytes"},
		{"non-uuid session", http.MethodGet, base("/sessions/123/history"), nil, 422, "Invalid session_id: must be a UUID"},
		{"limit zero", http.MethodGet, base("/sessions?limit=0"), nil, 422, "Query parameter 'limit' must be an integer between 1 and 1000"},
		{"limit too big", http.MethodGet, base("/sessions?limit=1001"), nil, 422, "Query parameter 'limit' must be an integer between 1 and 1000"},
		{"limit text", http.MethodGet, base("/sessions/" + id + "/history?limit=ten"), nil, 422, "Query parameter 'limit' must be an integer between 1 and 1000"},
		{"bad cursor", http.MethodGet, base("/sessions?cursor=bm90LWEtY3Vyc29y"), nil, 422, "Invalid cursor"},
		{"bad project id", http.MethodGet, "/v3/projects/a%20b/chat/sessions", nil, 422, `Invalid project_id: "a b"`},
		{"unknown copilot_mode", http.MethodGet, base("/sessions?copilot_mode=expert"), nil, 422, modeMessage},
		{"copilot_mode prefix", http.MethodGet, base("/sessions?copilot_mode=teaching"), nil, 422, modeMessage},
		{"copilot_mode with limit", http.MethodGet, base("/sessions?limit=2&copilot_mode=naked"), nil, 422, modeMessage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.As("alice", tc.method, tc.path, tc.body)
			if r.Status != tc.status || r.Message() != tc.message {
				t.Fatalf("got %d %s, want %d %q", r.Status, r.Body, tc.status, tc.message)
			}
		})
	}
	// 255 characters is fine.
	if r := e.As("alice", http.MethodPatch, base("/sessions/"+id), map[string]string{"title": strings.Repeat("é", 255)}); r.Status != http.StatusOK {
		t.Fatalf("255 chars: %d %s", r.Status, r.Body)
	}
}

func TestProjectDirectory(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	opened := fake.AddProject("lab", "opened")
	closed := fake.AddProject("old lab", "closed")
	client, err := gns3.New(fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, apitest.Options{Projects: gns3.NewGNS3Directory(client, time.Second)})
	missing := "11111111-2222-4333-8444-555555555555"
	tests := []struct {
		project string
		status  int
		message string
	}{
		{opened, 200, ""},
		{closed, 403, "Project must be opened to use chat. Current status: closed"},
		{missing, 404, "Project '" + missing + "' not found"},
	}
	for _, tc := range tests {
		for _, prefix := range []string{"/v3/projects/", "/v3/copilot/projects/"} {
			r := e.As("alice", http.MethodGet, prefix+tc.project+"/chat/sessions", nil)
			if r.Status != tc.status || (tc.message != "" && r.Message() != tc.message) {
				t.Errorf("%s%s: %d %s, want %d %q", prefix, tc.project, r.Status, r.Body, tc.status, tc.message)
			}
		}
	}
}

func TestSurvivesRestart(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	seed(t, e.Store, "alice", 3)
	e.As("alice", http.MethodPatch, base("/sessions/"+threadID(0)), map[string]string{"title": "kept"})
	e.As("alice", http.MethodPut, base("/sessions/"+threadID(1)+"/pin"), nil)
	e.As("alice", http.MethodDelete, base("/sessions/"+threadID(2)), nil)
	e.Server.Close()
	if err := e.Store.Close(); err != nil {
		t.Fatal(err)
	}

	e2 := newEnv(t, apitest.Options{DBPath: e.DBPath})
	var list []sessions.ChatSession
	r := e2.As("alice", http.MethodGet, base("/sessions"), nil)
	r.JSON(t, &list)
	if len(list) != 2 || list[0].ThreadID != threadID(1) || !list[0].Pinned || list[1].Title != "kept" {
		t.Fatalf("after restart: %s", r.Body)
	}
}

func TestProjectRemoval(t *testing.T) {
	t.Run("single-user", func(t *testing.T) {
		e := newEnv(t, apitest.Options{SingleUser: true})
		seed(t, e.Store, auth.LocalUserID, 3)
		if r := e.Do(http.MethodDelete, base(""), "", nil); r.Status != http.StatusNoContent {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		list, _, err := e.Store.ListSessions(context.Background(), project, auth.LocalUserID, store.Page{Limit: 10})
		if err != nil || len(list) != 0 {
			t.Fatalf("sessions left: %v %v", list, err)
		}
	})
	t.Run("jwt user without controller", func(t *testing.T) {
		e := newEnv(t, apitest.Options{})
		seed(t, e.Store, "alice", 1)
		if r := e.As("alice", http.MethodDelete, base(""), nil); r.Status != http.StatusForbidden {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		if r := e.Do(http.MethodDelete, base(""), "", nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("anonymous remove: %d %s", r.Status, r.Body)
		}
	})
}

func FuzzRenameBody(f *testing.F) {
	for _, s := range []string{`{"title":"x"}`, `{"title":null}`, `{"title":""}`, `{}`, `[]`, `{"title":"a"`, `{"title":1e999}`, "\x00", `{"title":"\u0000"}`} {
		f.Add(s)
	}
	e := apitest.New(f, apitest.Options{SingleUser: true}, routes)
	k := store.Key{ProjectID: project, UserID: auth.LocalUserID, ThreadID: threadID(0)}
	if err := e.Store.CreateSession(context.Background(), &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := e.DoT(t, http.MethodPatch, base("/sessions/"+k.ThreadID), "", body)
		switch {
		case r.Status == http.StatusOK:
		case r.Status >= 400 && r.Status < 500 && r.Message() != "":
		default:
			t.Fatalf("body %q: %d %s", body, r.Status, r.Body)
		}
	})
}

// TestProjectRemovalPolicy: with a GNS3 controller, a user may remove a
// project's chat once the controller reports the project gone; the admin
// token may at any time; a wrong admin token is a 401.
func TestProjectRemovalPolicy(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	pid := fake.AddProject("lab", "opened")
	client, err := gns3.New(fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := gns3.NewGNS3Directory(client, time.Second)
	const admin = "admin-token-0123456789abcdef0123456789"
	e := apitest.New(t, apitest.Options{Projects: dir}, func(st store.Store, a *auth.Authenticator) []httpapi.Route {
		h := sessions.New(st, nil, sessions.RemovalPolicy{AdminToken: admin, Auth: a, Projects: dir})
		return append(h.Routes(), h.RemovalRoutes()...)
	})
	other := "8e7d6c5b-4a39-4281-9706-f5e4d3c2b1a0"
	for _, p := range []string{pid, other} {
		if err := e.Store.CreateSession(context.Background(), &store.Session{ThreadID: threadID(1), UserID: "alice", ProjectID: p}); err != nil {
			t.Fatal(err)
		}
	}
	left := func(p string) int {
		list, _, err := e.Store.ListSessions(context.Background(), p, "alice", store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	path := "/v3/projects/" + pid + "/chat"
	if r := e.As("alice", http.MethodDelete, path, nil); r.Status != http.StatusConflict || left(pid) != 1 {
		t.Fatalf("removal of an existing project: %d %s", r.Status, r.Body)
	}
	if r := e.Do(http.MethodDelete, path, "Bearer not-the-admin-token", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("wrong admin token: %d %s", r.Status, r.Body)
	}
	fake.DeleteProject(pid)
	if r := e.As("alice", http.MethodDelete, "/v3/copilot/projects/"+pid+"/chat", nil); r.Status != http.StatusNoContent || left(pid) != 0 {
		t.Fatalf("removal of a gone project: %d %s", r.Status, r.Body)
	}
	if left(other) != 1 {
		t.Fatal("another project lost its sessions")
	}
	if r := e.Do(http.MethodDelete, "/v3/projects/"+other+"/chat", "Bearer "+admin, nil); r.Status != http.StatusNoContent || left(other) != 0 {
		t.Fatalf("admin removal: %d %s", r.Status, r.Body)
	}
}

// webUIDate reads a time as the GNS3 web UI does: it appends "Z" unless the
// value already ends in a numeric offset, then parses the result.
func webUIDate(v string) (time.Time, error) {
	if !numericOffset.MatchString(v) {
		v += "Z"
	}
	return time.Parse(time.RFC3339Nano, v)
}

var numericOffset = regexp.MustCompile(`[+-]\d{2}:\d{2}$`)

// TestWebUIDate: the UI's rule accepts what views.Timestamp writes and refuses
// the "...Z" form it turns into "...ZZ".
func TestWebUIDate(t *testing.T) {
	at := time.Date(2026, 12, 3, 6, 2, 11, 123456789, time.UTC)
	got := views.Timestamp(at)
	if got != "2026-12-03T06:02:11.123456+00:00" {
		t.Fatalf("views.Timestamp = %q", got)
	}
	if parsed, err := webUIDate(got); err != nil || !parsed.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("web UI reads %q as %v (%v)", got, parsed, err)
	}
	if _, err := webUIDate("2026-12-03T06:02:11.123Z"); err == nil {
		t.Fatal("the web UI's rule must turn a Z time into an invalid date")
	}
	if _, err := webUIDate("2026-12-03T06:02:11.123456"); err != nil {
		t.Fatalf("a naive time reads as UTC in the web UI: %v", err)
	}
}

// TestListWithoutLimit: the GNS3 web UI lists sessions with no query and
// never pages, so without a limit the list holds up to 100 sessions,
// pinned first, then the most recently updated; with a limit it pages.
func TestListWithoutLimit(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	modes := make([]string, 120)
	seedModes(t, e.Store, "alice", 0, modes)
	if r := e.As("alice", http.MethodPut, base("/sessions/"+threadID(3)+"/pin"), nil); r.Status != http.StatusOK {
		t.Fatalf("pin: %d %s", r.Status, r.Body)
	}
	r := e.As("alice", http.MethodGet, base("/sessions"), nil)
	var page []sessions.ChatSession
	r.JSON(t, &page)
	if r.Status != http.StatusOK || len(page) != 100 {
		t.Fatalf("GET /sessions: %d, %d sessions, want 100", r.Status, len(page))
	}
	want := []string{threadID(3)}
	for i := 119; len(want) < 100; i-- {
		if i != 3 {
			want = append(want, threadID(i))
		}
	}
	for i, s := range page {
		if s.ThreadID != want[i] {
			t.Fatalf("session %d is %s, want %s (pinned first, then newest)", i, s.ThreadID, want[i])
		}
	}
	r = e.As("alice", http.MethodGet, base("/sessions?limit=50"), nil)
	page = nil
	r.JSON(t, &page)
	if len(page) != 50 || r.Header.Get("X-Next-Cursor") == "" {
		t.Fatalf("limit=50: %d sessions, cursor %q", len(page), r.Header.Get("X-Next-Cursor"))
	}
}
