package webui_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/webui"
)

const projectsSecret = "projects-test-secret-0123456789abcdef"

// projectsServer serves the projects route through the API's router with
// JWT authentication, as the local server mounts it, over real HTTP;
// gns3URL "" is a server without GNS3_URL.
func projectsServer(t *testing.T, gns3URL string) string {
	t.Helper()
	a, err := auth.NewAuthenticator([]byte(projectsSecret), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var client *gns3.Client
	if gns3URL != "" {
		client, err = gns3.New(gns3URL, nil, gns3.WithCallTimeout(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(httpapi.NewRouter(httpapi.Deps{Auth: a, Logger: slog.New(slog.DiscardHandler)}, webui.ProjectsRoute(client)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// aliceToken is a JWT of alice for projectsServer.
func aliceToken(t *testing.T) string {
	t.Helper()
	v, err := auth.NewJWTVerifier([]byte(projectsSecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	token, err := v.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func TestProjectsRoute(t *testing.T) {
	// A controller that has gone away: its port refuses connections.
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()

	type want struct {
		status int
		msg    string // substring of the message, for errors
	}
	token := aliceToken(t)
	tests := []struct {
		name  string
		setup func(fake *gns3test.Server) string // returns GNS3_URL
		anon  bool                               // no Authorization header
		want  want
		list  []string // names in order, for a 200
	}{
		{
			name: "listed, opened first then by name",
			setup: func(fake *gns3test.Server) string {
				fake.SetAuthorizer(gns3test.AcceptTokens(token))
				return fake.URL
			},
			want: want{status: http.StatusOK},
			list: []string{"access lab", "Campus OSPF", "Zeta", "archive", "Branch VPN"},
		},
		{
			name:  "no GNS3_URL",
			setup: func(*gns3test.Server) string { return "" },
			want:  want{status: http.StatusNoContent},
		},
		{
			name: "GNS3 refuses the token",
			setup: func(fake *gns3test.Server) string {
				fake.SetAuthorizer(gns3test.AcceptTokens("another-token"))
				return fake.URL
			},
			want: want{http.StatusUnauthorized, "Cannot list the GNS3 projects: GNS3 did not accept the user's credentials"},
		},
		{
			name: "GNS3 denies the privilege",
			setup: func(fake *gns3test.Server) string {
				fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Project.Audit"))
				return fake.URL
			},
			want: want{http.StatusForbidden, "the user lacks the GNS3 permission for this action (Permission denied (privilege Project.Audit is required))"},
		},
		{
			name: "GNS3 fails",
			setup: func(fake *gns3test.Server) string {
				fake.SetAuthorizer(func(string, string) int { return http.StatusInternalServerError })
				return fake.URL
			},
			want: want{http.StatusBadGateway, "Cannot list the GNS3 projects: 500: Internal Server Error"},
		},
		{
			name:  "GNS3 down",
			setup: func(*gns3test.Server) string { return goneURL },
			want:  want{http.StatusBadGateway, "Cannot list the GNS3 projects: GNS3 controller unavailable: connection refused"},
		},
		{
			name: "GNS3 does not answer",
			setup: func(fake *gns3test.Server) string {
				fake.SetHang(true)
				return fake.URL
			},
			want: want{http.StatusBadGateway, "the GNS3 controller did not answer in time"},
		},
		{
			name: "no credentials: refused before GNS3",
			setup: func(fake *gns3test.Server) string {
				return fake.URL
			},
			anon: true,
			want: want{http.StatusUnauthorized, "Not authenticated"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := gns3test.NewServer(t, nil)
			for _, p := range []struct{ name, status string }{
				{"Zeta", gns3.StatusOpened}, {"archive", gns3.StatusClosed}, {"Campus OSPF", gns3.StatusOpened},
				{"Branch VPN", gns3.StatusClosed}, {"access lab", gns3.StatusOpened},
			} {
				fake.AddProject(p.name, p.status)
			}
			url := projectsServer(t, tc.setup(fake))
			req, err := http.NewRequest(http.MethodGet, url+webui.PathProjects, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.anon {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tc.want.status {
				t.Fatalf("status = %d, want %d", res.StatusCode, tc.want.status)
			}
			if tc.want.status == http.StatusNoContent {
				if b, _ := io.ReadAll(res.Body); len(b) != 0 {
					t.Errorf("204 with a body: %q", b)
				}
				return
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if tc.want.status != http.StatusOK {
				var body struct{ Message string }
				if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(body.Message, tc.want.msg) {
					t.Errorf("message = %q, want it to contain %q", body.Message, tc.want.msg)
				}
				for _, secret := range []string{token, fake.URL, strings.TrimPrefix(goneURL, "http://")} {
					if strings.Contains(body.Message, secret) {
						t.Errorf("message %q leaks %q", body.Message, secret)
					}
				}
				if tc.anon && fake.Requests() != 0 {
					t.Errorf("GNS3 was asked %d times for an unauthenticated request", fake.Requests())
				}
				return
			}
			var got []map[string]any
			if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				if len(p) != 3 || p["project_id"] == "" || (p["status"] != "opened" && p["status"] != "closed") {
					t.Errorf("project %v: want exactly project_id, name and status", p)
				}
				names = append(names, p["name"].(string))
			}
			if !slices.Equal(names, tc.list) {
				t.Errorf("names = %q, want %q", names, tc.list)
			}
			if got := fake.LastAuthorization(); got != "Bearer "+token {
				t.Errorf("GNS3 got Authorization %q, want the user's token", got)
			}
		})
	}
}

func TestSortProjects(t *testing.T) {
	got := webui.SortProjects([]gns3.Project{
		{ProjectID: "b", Name: "lab", Status: "closed"},
		{ProjectID: "c", Name: "Lab", Status: "opened"},
		{ProjectID: "a", Name: "lab", Status: "opened"},
		{ProjectID: "d", Name: "", Status: ""},
	})
	want := []webui.Project{
		{ProjectID: "c", Name: "Lab", Status: "opened"},
		{ProjectID: "a", Name: "lab", Status: "opened"},
		{ProjectID: "d", Name: "", Status: ""},
		{ProjectID: "b", Name: "lab", Status: "closed"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("SortProjects = %+v, want %+v", got, want)
	}
	if got := webui.SortProjects(nil); got == nil || len(got) != 0 {
		t.Errorf("SortProjects(nil) = %#v, want an empty list (JSON [])", got)
	}
}
