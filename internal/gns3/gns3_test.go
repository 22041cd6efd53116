package gns3_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

const (
	tokAlice = "alice-token.SECRET.sig"
	tokBob   = "bob-token.SECRET.sig"
)

var (
	alice = auth.Identity{UserID: "alice", Token: tokAlice, Via: auth.ViaJWT}
	bob   = auth.Identity{UserID: "bob", Token: tokBob, Via: auth.ViaJWT}
)

func newClient(t *testing.T, url string) *gns3.Client {
	t.Helper()
	c, err := gns3.New(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// deadURL returns the URL of a port nobody listens on any more.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error leaks the token: %v", err)
	}
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:3080", true},
		{"https://gns3.example.com/", true},
		{"http://host/prefix", true},
		{"gns3:3080", false},
		{"ftp://gns3", false},
		{"http://", false},
		{"http://gns3?token=x", false},
		{"", false},
	} {
		c, err := gns3.New(tt.url, nil)
		if (err == nil) != tt.ok {
			t.Errorf("New(%q) = %v, %v; want ok=%v", tt.url, c, err, tt.ok)
		}
		if err == nil && strings.HasSuffix(c.BaseURL(), "/") {
			t.Errorf("New(%q): base %q keeps a trailing slash", tt.url, c.BaseURL())
		}
	}
}

func TestGetProject(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	opened := fake.AddProject("lab1", gns3.StatusOpened)
	c := newClient(t, fake.URL)

	p, err := c.GetProject(context.Background(), tokAlice, opened)
	if err != nil {
		t.Fatal(err)
	}
	want := gns3.Project{
		ProjectID: opened, Name: "lab1", Status: "opened", Path: "/home/gns3/GNS3/projects/" + opened,
		Filename: "lab1.gns3", AutoClose: true, SceneHeight: 1000, SceneWidth: 2000, Zoom: 100,
		GridSize: 75, DrawingGridSize: 25,
	}
	if p.ProjectID != want.ProjectID || p.Name != want.Name || p.Status != want.Status || p.Path != want.Path ||
		p.Filename != want.Filename || p.AutoClose != want.AutoClose || p.SceneHeight != want.SceneHeight ||
		p.SceneWidth != want.SceneWidth || p.Zoom != want.Zoom || p.GridSize != want.GridSize ||
		p.DrawingGridSize != want.DrawingGridSize || p.Supplier != nil || p.Variables != nil {
		t.Errorf("project = %+v, want %+v", *p, want)
	}
	if got := fake.LastAuthorization(); got != "Bearer "+tokAlice {
		t.Errorf("Authorization sent = %q", got)
	}
}

func TestClientErrors(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	opened := fake.AddProject("lab1", gns3.StatusOpened)
	missing := "0d3e5fa5-7c3b-4d1b-9a55-1b2b3c4d5e6f"
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"project_id": `))
	}))
	t.Cleanup(garbage.Close)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(`<html><body>nginx: bad gateway</body></html>`))
	}))
	t.Cleanup(html.Close)

	tests := []struct {
		name       string
		url        string
		authorize  gns3test.Authorizer
		project    string
		is         []error
		status     int // expected *StatusError code, 0 if none
		message    string
		noRequests bool
	}{
		{name: "not found", url: fake.URL, project: missing,
			is: []error{gns3.ErrProjectNotFound, gns3.ErrNotFound}, status: 404, message: "doesn't exist"},
		{name: "unauthorized", url: fake.URL, authorize: gns3test.AcceptTokens("other"), project: opened,
			is: []error{gns3.ErrUnauthorized}, status: 401, message: "Could not validate credentials"},
		{name: "forbidden", url: fake.URL, authorize: func(string, string) int { return 403 }, project: opened,
			is: []error{gns3.ErrUnauthorized, gns3.ErrForbidden}, status: 403, message: "Permission denied"},
		{name: "server error", url: fake.URL, authorize: func(string, string) int { return 500 }, project: opened,
			status: 500, message: "Internal Server Error"},
		{name: "html error body", url: html.URL, project: opened, status: 502},
		{name: "unreachable", url: deadURL(t), project: opened, is: []error{gns3.ErrUnavailable}},
		{name: "invalid JSON", url: garbage.URL, project: opened, is: []error{gns3.ErrUnavailable}},
		{name: "invalid id", url: fake.URL, project: "../../v3/users", is: []error{gns3.ErrInvalidID}, noRequests: true},
		{name: "uuid without dashes", url: fake.URL, project: strings.ReplaceAll(opened, "-", ""), is: []error{gns3.ErrInvalidID}, noRequests: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.SetAuthorizer(tt.authorize)
			before := fake.Requests()
			_, err := newClient(t, tt.url).GetProject(context.Background(), tokAlice, tt.project)
			if err == nil {
				t.Fatal("no error")
			}
			noSecret(t, err)
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("error %v is not %v", err, target)
				}
			}
			var se *gns3.StatusError
			switch {
			case tt.status == 0 && errors.As(err, &se):
				t.Errorf("unexpected status error %v", err)
			case tt.status != 0 && !errors.As(err, &se):
				t.Errorf("error %v is not a *StatusError", err)
			case tt.status != 0:
				if se.StatusCode != tt.status || !strings.Contains(se.Message, tt.message) {
					t.Errorf("status error %d %q, want %d ...%q...", se.StatusCode, se.Message, tt.status, tt.message)
				}
				if strings.Contains(se.Message, "<html>") {
					t.Errorf("HTML body copied into the message: %q", se.Message)
				}
			}
			if tt.noRequests && fake.Requests() != before {
				t.Errorf("a request was sent for an invalid id")
			}
		})
	}
}

func TestClientContextCanceled(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	id := fake.AddProject("lab", gns3.StatusOpened)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newClient(t, fake.URL).GetProject(ctx, tokAlice, id)
	if !errors.Is(err, context.Canceled) || errors.Is(err, gns3.ErrUnavailable) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestBaseURLWithPrefix(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	id := fake.AddProject("lab", gns3.StatusOpened)
	proxy := httptest.NewServer(http.StripPrefix("/gns3", fake.Config.Handler))
	t.Cleanup(proxy.Close)
	p, err := newClient(t, proxy.URL+"/gns3/").GetProject(context.Background(), tokAlice, id)
	if err != nil || p.ProjectID != id {
		t.Fatalf("GetProject through prefix: %v, %v", p, err)
	}
}

func TestNodesAndLinks(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	id := fake.AddProject("lab", gns3.StatusOpened)
	empty := fake.AddProject("empty", gns3.StatusOpened)
	topo := fake.SeedTopology(id)
	c := newClient(t, fake.URL)
	ctx := context.Background()

	nodes, err := c.GetNodes(ctx, tokAlice, id)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]gns3.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	if len(nodes) != 4 || len(byName) != 4 {
		t.Fatalf("got %d nodes: %+v", len(nodes), nodes)
	}
	pc1 := byName["PC1"]
	if pc1.NodeID != topo.Nodes["PC1"] || pc1.NodeType != "vpcs" || pc1.Status != gns3.NodeStarted ||
		pc1.Console == nil || *pc1.Console != 5001 || pc1.ConsoleType != "telnet" || pc1.ConsoleHost != "127.0.0.1" ||
		pc1.ProjectID != id || pc1.X != -300 || pc1.Y != -100 || pc1.Label == nil || pc1.Label.Text != "PC1" {
		t.Errorf("PC1 = %+v", pc1)
	}
	if len(pc1.Ports) != 1 || pc1.Ports[0].Name != "Ethernet0" || pc1.Ports[0].ShortName != "e0" ||
		pc1.Ports[0].LinkType != "ethernet" || pc1.Ports[0].AdapterNumber != 0 || pc1.Ports[0].PortNumber != 0 ||
		pc1.Ports[0].DataLinkTypes["Ethernet"] != "DLT_EN10MB" {
		t.Errorf("PC1 ports = %+v", pc1.Ports)
	}
	if sw := byName["Switch1"]; sw.NodeType != "ethernet_switch" || len(sw.Ports) != 8 || sw.Ports[7].ShortName != "e7" || sw.ConsoleType != "none" {
		t.Errorf("Switch1 = %+v", sw)
	}
	if r1 := byName["R1"]; r1.NodeType != "qemu" || r1.Status != gns3.NodeStopped || len(r1.Ports) != 4 ||
		r1.Ports[2].AdapterNumber != 2 || r1.Ports[2].Name != "Gi0/2" || r1.Ports[2].MacAddress == "" {
		t.Errorf("R1 = %+v", r1)
	}

	links, err := c.GetLinks(ctx, tokAlice, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 3 {
		t.Fatalf("got %d links", len(links))
	}
	l := links[2]
	if l.LinkID != topo.Links[2] || l.LinkType != "ethernet" || l.Suspend || len(l.Nodes) != 2 ||
		l.Nodes[0].NodeID != topo.Nodes["R1"] || l.Nodes[1].NodeID != topo.Nodes["Switch1"] ||
		l.Nodes[1].PortNumber != 7 || l.Nodes[1].Label == nil || l.Nodes[1].Label.Text != "e7" {
		t.Errorf("link R1-Switch1 = %+v", l)
	}

	for name, f := range map[string]func() (int, error){
		"nodes": func() (int, error) { n, err := c.GetNodes(ctx, tokAlice, empty); return len(n), err },
		"links": func() (int, error) { n, err := c.GetLinks(ctx, tokAlice, empty); return len(n), err },
	} {
		if n, err := f(); err != nil || n != 0 {
			t.Errorf("empty project %s: %d, %v", name, n, err)
		}
	}
	if _, err := c.GetNodes(ctx, tokAlice, "8a1f4a52-5d2a-4b9e-8a8c-2f4c4f6e9a10"); !errors.Is(err, gns3.ErrProjectNotFound) {
		t.Errorf("nodes of a missing project: %v", err)
	}
	if _, err := c.GetLinks(ctx, tokBob, id); !errors.Is(err, gns3.ErrUnauthorized) {
		t.Errorf("links with a bad token: %v", err)
	}
}

func TestClientProjectGone(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	id := fake.AddProject("lab", gns3.StatusClosed)
	c := newClient(t, fake.URL)
	ctx := context.Background()
	if gone, err := c.ProjectGone(ctx, tokAlice, id); err != nil || gone {
		t.Fatalf("existing project: gone=%v err=%v", gone, err)
	}
	if gone, err := c.ProjectGone(ctx, tokBob, id); err == nil || gone {
		t.Fatalf("bad token: gone=%v err=%v", gone, err)
	}
	fake.DeleteProject(id)
	if gone, err := c.ProjectGone(ctx, tokAlice, id); err != nil || !gone {
		t.Fatalf("deleted project: gone=%v err=%v", gone, err)
	}
}

func TestCheckProject(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	opened := fake.AddProject("lab1", gns3.StatusOpened)
	closed := fake.AddProject("lab2", gns3.StatusClosed)
	missing := "0d3e5fa5-7c3b-4d1b-9a55-1b2b3c4d5e6f"

	tests := []struct {
		name      string
		url       string
		authorize gns3test.Authorizer
		project   string
		status    int // 0: success
		message   string
	}{
		{"opened", fake.URL, gns3test.AcceptTokens(tokAlice), opened, 0, ""},
		{"closed", fake.URL, nil, closed, 403, "Project must be opened to use chat. Current status: closed"},
		{"not found", fake.URL, nil, missing, 404, "Project '" + missing + "' not found"},
		{"not a uuid", fake.URL, nil, "lab1", 404, "Project 'lab1' not found"},
		{"token rejected", fake.URL, gns3test.AcceptTokens("someone-else"), opened, 401, "Could not validate credentials"},
		{"access denied", fake.URL, func(string, string) int { return 403 }, opened, 403, "Access to project '" + opened + "' denied"},
		{"controller error", fake.URL, func(string, string) int { return 503 }, opened, 502, "GNS3 controller error (HTTP 503)"},
		{"unreachable", deadURL(t), nil, opened, 502, gns3.MsgUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.SetAuthorizer(tt.authorize)
			d := gns3.NewGNS3Directory(newClient(t, tt.url), gns3.DefaultCacheTTL)
			err := d.CheckProject(context.Background(), alice, tt.project)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var pe *gns3.ProjectError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *ProjectError", err, err)
			}
			if pe.Status != tt.status || pe.Message != tt.message || pe.Error() != tt.message {
				t.Errorf("got %d %q, want %d %q", pe.Status, pe.Message, tt.status, tt.message)
			}
			noSecret(t, err)
			if pe.Err != nil {
				noSecret(t, pe.Err)
			}
		})
	}
}

func TestCheckProjectContextCanceled(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	id := fake.AddProject("lab", gns3.StatusOpened)
	d := gns3.NewGNS3Directory(newClient(t, fake.URL), gns3.DefaultCacheTTL)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := d.CheckProject(ctx, alice, id)
	var pe *gns3.ProjectError
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Fatalf("err = %v, want the context error", err)
	}
}

// fakeClock is a settable clock for cache expiry.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestCheckProjectCache(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice, tokBob))
	id := fake.AddProject("lab", gns3.StatusOpened)
	path := "GET /v3/projects/" + id
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	d := gns3.NewGNS3Directory(newClient(t, fake.URL), 5*time.Second, gns3.WithClock(clk.now))
	ctx := context.Background()

	check := func(id auth.Identity, project string, wantStatus, wantHits int) {
		t.Helper()
		err := d.CheckProject(ctx, id, project)
		var pe *gns3.ProjectError
		switch {
		case wantStatus == 0 && err != nil:
			t.Fatalf("%v: err = %v", id, err)
		case wantStatus != 0 && (!errors.As(err, &pe) || pe.Status != wantStatus):
			t.Fatalf("%v: err = %v, want status %d", id, err, wantStatus)
		}
		if got := fake.Hits(path); got != wantHits {
			t.Fatalf("%v: %d GNS3 requests, want %d", id, got, wantHits)
		}
	}

	check(alice, id, 0, 1)
	check(alice, id, 0, 1) // cache hit
	clk.advance(4 * time.Second)
	check(alice, id, 0, 1) // still fresh
	check(bob, id, 0, 2)   // another user: asked separately
	check(bob, id, 0, 2)

	// Same user id, another token: never answered from alice's entry.
	mallory := auth.Identity{UserID: "alice", Token: "forged", Via: auth.ViaJWT}
	check(mallory, id, 401, 3)
	check(mallory, id, 401, 4) // failures are not cached
	check(alice, id, 0, 4)

	clk.advance(time.Second) // alice's entry expires (5 s)
	check(alice, id, 0, 5)

	// A refusal is not cached: closed twice asks twice, and reopening is
	// seen at once.
	other := fake.AddProject("lab2", gns3.StatusClosed)
	path = "GET /v3/projects/" + other
	check(alice, other, 403, 1)
	check(alice, other, 403, 2)
	fake.SetStatus(other, gns3.StatusOpened)
	check(alice, other, 0, 3)
	check(alice, other, 0, 3)

	// Once the controller reports the project gone, no cached success remains.
	fake.DeleteProject(other)
	gone, err := d.ProjectGone(ctx, bob, other)
	if err != nil || !gone {
		t.Fatalf("ProjectGone = %v, %v", gone, err)
	}
	check(alice, other, 404, 5)
}

func TestCheckProjectNoCache(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	id := fake.AddProject("lab", gns3.StatusOpened)
	d := gns3.NewGNS3Directory(newClient(t, fake.URL), 0)
	for i := 1; i <= 3; i++ {
		if err := d.CheckProject(context.Background(), alice, id); err != nil {
			t.Fatal(err)
		}
		if got := fake.Hits("GET /v3/projects/" + id); got != i {
			t.Fatalf("after %d checks: %d requests", i, got)
		}
	}
}

func TestDirectoryProjectGone(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	id := fake.AddProject("lab", gns3.StatusOpened)
	d := gns3.NewGNS3Directory(newClient(t, fake.URL), gns3.DefaultCacheTTL)
	ctx := context.Background()
	if gone, err := d.ProjectGone(ctx, alice, id); err != nil || gone {
		t.Fatalf("existing: %v %v", gone, err)
	}
	var pe *gns3.ProjectError
	if gone, err := d.ProjectGone(ctx, bob, id); gone || !errors.As(err, &pe) || pe.Status != 401 {
		t.Fatalf("bad token: %v %v", gone, err)
	}
	if gone, err := d.ProjectGone(ctx, alice, "not-a-uuid"); err != nil || !gone {
		t.Fatalf("invalid id: %v %v", gone, err)
	}
	fake.DeleteProject(id)
	if gone, err := d.ProjectGone(ctx, alice, id); err != nil || !gone {
		t.Fatalf("deleted: %v %v", gone, err)
	}
	dead := gns3.NewGNS3Directory(newClient(t, deadURL(t)), 0)
	if gone, err := dead.ProjectGone(ctx, alice, id); gone || !errors.As(err, &pe) || pe.Status != 502 {
		t.Fatalf("unreachable: %v %v", gone, err)
	}
}

func TestOpenDirectory(t *testing.T) {
	var d gns3.ProjectDirectory = gns3.OpenDirectory{}
	if err := d.CheckProject(context.Background(), alice, "anything"); err != nil {
		t.Fatal(err)
	}
	if gone, err := d.ProjectGone(context.Background(), alice, "anything"); err != nil || !gone {
		t.Fatalf("ProjectGone = %v, %v", gone, err)
	}
	var _ gns3.ProjectDirectory = (*gns3.GNS3Directory)(nil)
}

func TestDirectoryWithJWT(t *testing.T) {
	// The fake controller verifies real HS256 tokens with the shared secret.
	secret := []byte("shared-secret-with-gns3-0123456789abcdef")
	v, err := auth.NewJWTVerifier(secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := gns3test.NewServer(t, func(token, _ string) int {
		if _, err := v.Verify(token); err != nil {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	})
	id := fake.AddProject("lab", gns3.StatusOpened)
	tok, err := v.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d := gns3.NewGNS3Directory(newClient(t, fake.URL), gns3.DefaultCacheTTL)
	if err := d.CheckProject(context.Background(), auth.Identity{UserID: "alice", Token: tok, Via: auth.ViaJWT}, id); err != nil {
		t.Fatal(err)
	}
	var pe *gns3.ProjectError
	err = d.CheckProject(context.Background(), auth.Identity{UserID: "alice", Via: auth.ViaLocal}, id)
	if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized {
		t.Fatalf("no token: %v", err)
	}
}
