package gns3_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

// lab is a fake controller with an opened project holding the seeded
// topology, and the seeded templates.
type lab struct {
	fake *gns3test.Server
	c    *gns3.Client
	pid  string
	topo gns3test.Topology
	tmpl gns3test.LabTemplates
}

func newLab(t *testing.T, opts ...gns3.Option) *lab {
	t.Helper()
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	pid := fake.AddProject("lab", gns3.StatusOpened)
	c, err := gns3.New(fake.URL, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &lab{fake: fake, c: c, pid: pid, topo: fake.SeedTopology(pid), tmpl: fake.SeedTemplates()}
}

const missingID = "0d3e5fa5-7c3b-4d1b-9a55-1b2b3c4d5e6f"

// wantStatus checks err is a *StatusError with code and a message
// containing msg, and whether it names the project as missing.
func wantStatus(t *testing.T, err error, code int, msg string, projectMissing bool) {
	t.Helper()
	noSecret(t, err)
	var se *gns3.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want HTTP %d", err, code)
	}
	if se.StatusCode != code || !strings.Contains(se.Message, msg) {
		t.Errorf("got %d %q, want %d ...%q...", se.StatusCode, se.Message, code, msg)
	}
	if code == http.StatusNotFound && !errors.Is(err, gns3.ErrNotFound) {
		t.Errorf("%v is not ErrNotFound", err)
	}
	if got := errors.Is(err, gns3.ErrProjectNotFound); got != projectMissing {
		t.Errorf("errors.Is(%v, ErrProjectNotFound) = %v, want %v", err, got, projectMissing)
	}
}

func TestListProjects(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	a := fake.AddProject("lab1", gns3.StatusOpened)
	b := fake.AddProject("lab2", gns3.StatusClosed)
	c := newClient(t, fake.URL)
	ps, err := c.ListProjects(context.Background(), tokAlice)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].ProjectID != a || ps[0].Name != "lab1" || ps[0].Status != "opened" ||
		ps[1].ProjectID != b || ps[1].Status != "closed" {
		t.Errorf("projects = %+v", ps)
	}
	if got := fake.LastAuthorization(); got != "Bearer "+tokAlice {
		t.Errorf("Authorization sent = %q, want the user's token", got)
	}
	fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Project.Audit"))
	_, err = c.ListProjects(context.Background(), tokAlice)
	if !errors.Is(err, gns3.ErrForbidden) || !strings.Contains(gns3.Describe(err), "Project.Audit") {
		t.Errorf("without Project.Audit: %v (%s)", err, gns3.Describe(err))
	}
	fake.SetRequestAuthorizer(nil)
	_, err = c.ListProjects(context.Background(), tokBob)
	if !errors.Is(err, gns3.ErrUnauthorized) || gns3.Describe(err) != "401: GNS3 did not accept the user's credentials" {
		t.Errorf("bad token: %v (%s)", err, gns3.Describe(err))
	}
	noSecret(t, err)

	empty := gns3test.NewServer(t, nil)
	if ps, err := newClient(t, empty.URL).ListProjects(context.Background(), tokAlice); err != nil || ps == nil || len(ps) != 0 {
		t.Errorf("no projects: %v, %v", ps, err)
	}
}

func TestGetTemplates(t *testing.T) {
	l := newLab(t)
	ts, err := l.c.GetTemplates(context.Background(), tokAlice)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]gns3.Template{}
	for _, tm := range ts {
		byID[tm.TemplateID] = tm
	}
	if len(ts) != 9 || len(byID) != 9 {
		t.Fatalf("%d templates: %+v", len(ts), ts)
	}
	if ts[0].Builtin || !ts[len(ts)-1].Builtin {
		t.Errorf("database templates are listed before built-in ones: %+v", ts)
	}
	for _, tt := range []struct {
		id   string
		want gns3.Template
	}{
		{gns3test.TemplateVPCS, gns3.Template{TemplateID: gns3test.TemplateVPCS, Name: "VPCS", Category: "guest", TemplateType: "vpcs",
			Builtin: true, Symbol: ":/symbols/affinity/square/blue/client.svg", DefaultNameFormat: "PC{0}"}},
		{gns3test.TemplateEthernetSwitch, gns3.Template{TemplateID: gns3test.TemplateEthernetSwitch, Name: "Ethernet switch",
			Category: "switch", TemplateType: "ethernet_switch", Builtin: true, Symbol: ":/symbols/affinity/square/blue/switch.svg",
			DefaultNameFormat: "Switch{0}", ConsoleType: "none"}},
		{gns3test.TemplateEthernetHub, gns3.Template{TemplateID: gns3test.TemplateEthernetHub, Name: "Ethernet hub", Category: "switch",
			TemplateType: "ethernet_hub", Builtin: true, Symbol: ":/symbols/affinity/square/blue/hub.svg", DefaultNameFormat: "Hub{0}"}},
		{l.tmpl.IOSv, gns3.Template{TemplateID: l.tmpl.IOSv, Name: "Cisco IOSv", Category: "router", TemplateType: "qemu",
			ComputeID: "local", Symbol: ":/symbols/affinity/square/blue/router.svg", DefaultNameFormat: "{name}-{0}",
			ConsoleType: "telnet", Adapters: 4, PortNameFormat: "Gi0/{0}", Platform: "x86_64"}},
		{l.tmpl.C7200, gns3.Template{TemplateID: l.tmpl.C7200, Name: "Cisco 7200", Category: "router", TemplateType: "dynamips",
			ComputeID: "local", Symbol: ":/symbols/affinity/square/blue/router.svg", DefaultNameFormat: "R{0}",
			ConsoleType: "telnet", Platform: "c7200"}},
		{l.tmpl.Docker, gns3.Template{TemplateID: l.tmpl.Docker, Name: "Alpine", Category: "guest", TemplateType: "docker",
			ComputeID: "local", Symbol: ":/symbols/affinity/square/blue/docker.svg", DefaultNameFormat: "{name}-{0}",
			ConsoleType: "telnet", Adapters: 2}},
	} {
		if got := byID[tt.id]; got != tt.want {
			t.Errorf("template %s:\n got %+v\nwant %+v", tt.id, got, tt.want)
		}
	}
	if _, ok := byID[gns3test.TemplateCloud]; !ok {
		t.Error("no Cloud template")
	}
	if _, ok := byID[gns3test.TemplateNAT]; !ok {
		t.Error("no NAT template")
	}
	if _, err := l.c.GetTemplates(context.Background(), tokBob); !errors.Is(err, gns3.ErrUnauthorized) {
		t.Errorf("bad token: %v", err)
	}
}

type wantPort struct {
	name, short       string
	adapter, port     int
	linkType          string
	withMAC, withType bool
}

func checkPorts(t *testing.T, n *gns3.Node, want []wantPort) {
	t.Helper()
	if len(n.Ports) != len(want) {
		t.Fatalf("%s: %d ports %+v, want %d", n.Name, len(n.Ports), n.Ports, len(want))
	}
	for i, w := range want {
		p := n.Ports[i]
		if p.Name != w.name || p.ShortName != w.short || p.AdapterNumber != w.adapter || p.PortNumber != w.port || p.LinkType != w.linkType {
			t.Errorf("%s port %d = %+v, want %+v", n.Name, i, p, w)
		}
		if len(p.DataLinkTypes) == 0 {
			t.Errorf("%s port %s: no data_link_types", n.Name, p.Name)
		}
		if w.withMAC != (p.MacAddress != "") || w.withType != (p.AdapterType != "") {
			t.Errorf("%s port %s: mac %q adapter type %q", n.Name, p.Name, p.MacAddress, p.AdapterType)
		}
	}
}

func seq(n int, f func(i int) wantPort) []wantPort {
	out := make([]wantPort, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func cat(parts ...[]wantPort) []wantPort {
	var out []wantPort
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestCreateNodeFromTemplate(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	eth := func(name, short string, a, p int) wantPort {
		return wantPort{name, short, a, p, "ethernet", false, false}
	}
	tests := []struct {
		name, template string
		wantName       string
		nodeType       string
		status         string
		console        bool
		consoleType    string
		ports          []wantPort
	}{
		{"vpcs", gns3test.TemplateVPCS, "PC3", "vpcs", "stopped", true, "telnet", []wantPort{eth("Ethernet0", "e0", 0, 0)}},
		{"vpcs again", gns3test.TemplateVPCS, "PC4", "vpcs", "stopped", true, "telnet", []wantPort{eth("Ethernet0", "e0", 0, 0)}},
		{"switch", gns3test.TemplateEthernetSwitch, "Switch2", "ethernet_switch", "started", false, "none",
			seq(8, func(i int) wantPort { return eth(fmt.Sprintf("Ethernet%d", i), fmt.Sprintf("e%d", i), 0, i) })},
		{"hub", gns3test.TemplateEthernetHub, "Hub1", "ethernet_hub", "started", false, "none",
			seq(8, func(i int) wantPort { return eth(fmt.Sprintf("Ethernet%d", i), fmt.Sprintf("e%d", i), 0, i) })},
		{"cloud", gns3test.TemplateCloud, "Cloud1", "cloud", "started", false, "none", []wantPort{eth("eth0", "eth0", 0, 0)}},
		{"nat", gns3test.TemplateNAT, "NAT1", "nat", "started", false, "none", []wantPort{eth("nat0", "nat0", 0, 0)}},
		{"qemu iosv", l.tmpl.IOSv, "CiscoIOSv-1", "qemu", "stopped", true, "telnet",
			seq(4, func(i int) wantPort {
				return wantPort{fmt.Sprintf("Gi0/%d", i), fmt.Sprintf("Gi0/%d", i), i, 0, "ethernet", true, true}
			})},
		{"qemu iosv again", l.tmpl.IOSv, "CiscoIOSv-2", "qemu", "stopped", true, "telnet",
			seq(4, func(i int) wantPort {
				return wantPort{fmt.Sprintf("Gi0/%d", i), fmt.Sprintf("Gi0/%d", i), i, 0, "ethernet", true, true}
			})},
		// R1 is taken by the seeded Qemu router.
		{"dynamips c7200", l.tmpl.C7200, "R2", "dynamips", "stopped", true, "telnet", append(
			[]wantPort{eth("FastEthernet0/0", "f0/0", 0, 0)},
			seq(4, func(i int) wantPort { return eth(fmt.Sprintf("Ethernet1/%d", i), fmt.Sprintf("e1/%d", i), 1, i) })...)},
		{"iou l3", l.tmpl.IOUL3, "IOU1", "iou", "stopped", true, "telnet", cat(
			seq(4, func(i int) wantPort { return eth(fmt.Sprintf("Ethernet0/%d", i), fmt.Sprintf("e0/%d", i), 0, i) }),
			seq(4, func(i int) wantPort { return eth(fmt.Sprintf("Ethernet1/%d", i), fmt.Sprintf("e1/%d", i), 1, i) }),
			seq(4, func(i int) wantPort {
				return wantPort{fmt.Sprintf("Serial2/%d", i), fmt.Sprintf("s2/%d", i), 2, i, "serial", false, false}
			}),
			seq(4, func(i int) wantPort {
				return wantPort{fmt.Sprintf("Serial3/%d", i), fmt.Sprintf("s3/%d", i), 3, i, "serial", false, false}
			}))},
		{"docker", l.tmpl.Docker, "Alpine-1", "docker", "stopped", true, "telnet", []wantPort{
			{"eth0", "eth0", 0, 0, "ethernet", true, false}, {"eth1", "eth1", 1, 0, "ethernet", true, false}}},
	}
	consoles := map[int]bool{5001: true, 5002: true, 5003: true, 5004: true} // the seeded nodes'
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, y := 100+i, -50-i
			n, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, tt.template, x, y, "")
			if err != nil {
				t.Fatal(err)
			}
			if !gns3.ValidID(n.NodeID) || n.ProjectID != l.pid || n.Name != tt.wantName || n.NodeType != tt.nodeType ||
				n.Status != tt.status || n.TemplateID != tt.template || n.X != x || n.Y != y || n.ComputeID != "local" ||
				n.ConsoleHost != "127.0.0.1" || n.ConsoleType != tt.consoleType || n.Label == nil || n.Label.Text != tt.wantName {
				t.Errorf("node = %+v", n)
			}
			if tt.console {
				if n.Console == nil || consoles[*n.Console] || *n.Console < 5000 {
					t.Errorf("console = %v (taken: %v)", n.Console, consoles)
				} else {
					consoles[*n.Console] = true
				}
			} else if n.Console != nil {
				t.Errorf("console = %d, want none", *n.Console)
			}
			checkPorts(t, n, tt.ports)
			got, err := l.c.GetNode(ctx, tokAlice, l.pid, n.NodeID)
			if err != nil || got.Name != n.Name || len(got.Ports) != len(n.Ports) {
				t.Errorf("GetNode = %+v, %v", got, err)
			}
		})
	}
	if first := l.fake.Nodes(l.pid)[4]; first["console"] != 5000 {
		t.Errorf("first allocated console = %v, want 5000", first["console"])
	}
	if vpcs := l.fake.Nodes(l.pid)[4]; fmt.Sprint(vpcs["tags"]) != "[device_type:gns3_vpcs_telnet]" {
		t.Errorf("VPCS tags = %v", vpcs["tags"])
	}
	nodes, err := l.c.GetNodes(ctx, tokAlice, l.pid)
	if err != nil || len(nodes) != 4+len(tests) {
		t.Fatalf("listing: %d nodes, %v", len(nodes), err)
	}
}

func TestCreateNodeFromTemplateErrors(t *testing.T) {
	l := newLab(t)
	closed := l.fake.AddProject("closed", gns3.StatusClosed)
	ctx := context.Background()
	tests := []struct {
		name, project, template, compute string
		code                             int
		msg                              string
		projectMissing                   bool
	}{
		{"unknown template", l.pid, missingID, "", 404, "Template '" + missingID + "' not found", false},
		{"unknown project", missingID, gns3test.TemplateVPCS, "", 404, "Project ID " + missingID + " doesn't exist", true},
		{"closed project", closed, gns3test.TemplateVPCS, "", 403, "The project is not opened", false},
		{"unknown compute", l.pid, gns3test.TemplateVPCS, "remote", 404, "Compute ID remote doesn't exist", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, tt.project, tt.template, 0, 0, tt.compute)
			wantStatus(t, err, tt.code, tt.msg, tt.projectMissing)
		})
	}
	bad := l.fake.AddTemplate(map[string]any{"name": "Bad", "template_type": "vpcs", "category": "guest",
		"symbol": "x", "builtin": false, "default_name_format": "{name}-{0}{foo}"})
	_, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, bad, 0, 0, "")
	wantStatus(t, err, 409, "{foo} is not a valid replacement string in the node name", false)
	l.fake.RemoveTemplate(bad)
	_, err = l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, bad, 0, 0, "")
	wantStatus(t, err, 404, "Template '"+bad+"' not found", false)

	before := l.fake.Requests()
	for _, ids := range [][2]string{{"lab", gns3test.TemplateVPCS}, {l.pid, "VPCS"}, {l.pid, "../../v3/users"}} {
		if _, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, ids[0], ids[1], 0, 0, ""); !errors.Is(err, gns3.ErrInvalidID) {
			t.Errorf("%v: err = %v", ids, err)
		}
	}
	if l.fake.Requests() != before {
		t.Error("a request was sent for an invalid id")
	}
}

func TestNodeNumbering(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	pid := fake.AddProject("lab", gns3.StatusOpened)
	c := newClient(t, fake.URL)
	ctx := context.Background()
	create := func() *gns3.Node {
		t.Helper()
		n, err := c.CreateNodeFromTemplate(ctx, tokAlice, pid, gns3test.TemplateVPCS, 0, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	pc1, pc2, pc3 := create(), create(), create()
	if pc1.Name != "PC1" || pc2.Name != "PC2" || pc3.Name != "PC3" {
		t.Fatalf("names %s %s %s", pc1.Name, pc2.Name, pc3.Name)
	}
	if err := c.DeleteNode(ctx, tokAlice, pid, pc2.NodeID); err != nil {
		t.Fatal(err)
	}
	if n := create(); n.Name != "PC2" { // a freed name is given again
		t.Errorf("after deleting PC2: %s", n.Name)
	}

	// Concurrent creations get distinct names and consoles.
	var wg sync.WaitGroup
	var mu sync.Mutex
	names, consoles := map[string]bool{}, map[int]bool{}
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := c.CreateNodeFromTemplate(ctx, tokAlice, pid, gns3test.TemplateVPCS, 0, 0, "")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			names[n.Name], consoles[*n.Console] = true, true
		}()
	}
	wg.Wait()
	if len(names) != 12 || len(consoles) != 12 || !names["PC4"] || !names["PC15"] {
		t.Errorf("concurrent names %v consoles %v", names, consoles)
	}
}

func TestCreateRequestShape(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b)+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/start"):
			w.WriteHeader(http.StatusOK) // a body GNS3 does not send: ignored
			_, _ = w.Write([]byte(`{"ignored": true}`))
		case strings.HasSuffix(r.URL.Path, "/links"):
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"link_id": "` + missingID + `", "link_type": "ethernet"}`))
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"node_id": "` + missingID + `", "name": "PC1"}`))
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	ctx := context.Background()
	p, tm, n := "8a1f4a52-5d2a-4b9e-8a8c-2f4c4f6e9a10", gns3test.TemplateVPCS, missingID
	if node, err := c.CreateNodeFromTemplate(ctx, tokAlice, p, tm, -10, 20, ""); err != nil || node.NodeID != missingID {
		t.Fatalf("create: %v, %v", node, err)
	}
	if _, err := c.CreateNodeFromTemplate(ctx, tokAlice, p, tm, 1, 2, "gns3vm"); err != nil {
		t.Fatal(err)
	}
	if err := c.NodeAction(ctx, tokAlice, p, n, gns3.NodeActionStart); err != nil {
		t.Fatal(err)
	}
	a := gns3.LinkEnd{NodeID: n, AdapterNumber: 1, PortNumber: 2, Label: &gns3.Label{Text: "x"}}
	b := gns3.LinkEnd{NodeID: missingID, AdapterNumber: 0, PortNumber: 3}
	if l, err := c.CreateLink(ctx, tokAlice, p, a, b); err != nil || l.LinkID != missingID {
		t.Fatalf("link: %v, %v", l, err)
	}
	auth := "Bearer " + tokAlice
	want := []string{
		"POST /v3/projects/" + p + "/templates/" + tm + ` {"x":-10,"y":20,"compute_id":"local"} ` + auth,
		"POST /v3/projects/" + p + "/templates/" + tm + ` {"x":1,"y":2,"compute_id":"gns3vm"} ` + auth,
		"POST /v3/projects/" + p + "/nodes/" + n + "/start  " + auth,
		"POST /v3/projects/" + p + `/links {"nodes":[{"node_id":"` + n + `","adapter_number":1,"port_number":2},{"node_id":"` +
			missingID + `","adapter_number":0,"port_number":3}]} ` + auth,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUpdateNode(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	pc3, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateVPCS, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		node   string
		fields map[string]any
		want   string // name after the update
		code   int    // expected error status, 0: success
		msg    string
	}{
		{"rename", pc3.NodeID, map[string]any{"name": "Client"}, "Client", 0, ""},
		{"spaces removed", pc3.NodeID, map[string]any{"name": "Lab PC"}, "LabPC", 0, ""},
		// PC1 and PC2 are taken: GNS3 numbers from the base name.
		{"taken name", pc3.NodeID, map[string]any{"name": "PC1"}, "PC3", 0, ""},
		{"same name", pc3.NodeID, map[string]any{"name": "PC3", "x": 40, "y": -60}, "PC3", 0, ""},
		{"started node", l.topo.Nodes["PC1"], map[string]any{"name": "Web"}, "", 409,
			"Sorry, it is not possible to rename a node that is already powered on"},
		{"started switch", l.topo.Nodes["Switch1"], map[string]any{"name": "Core"}, "Core", 0, ""},
		{"unknown node", missingID, map[string]any{"name": "X"}, "", 404, "Node ID " + missingID + " doesn't exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := l.c.UpdateNode(ctx, tokAlice, l.pid, tt.node, tt.fields)
			if tt.code != 0 {
				wantStatus(t, err, tt.code, tt.msg, false)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Name != tt.want || n.Label == nil || n.Label.Text != tt.want || n.NodeID != tt.node {
				t.Errorf("node = %+v", n)
			}
			if got := l.fake.Node(l.pid, tt.node); got["name"] != tt.want {
				t.Errorf("fake holds %v", got["name"])
			}
		})
	}
	if n := l.fake.Node(l.pid, pc3.NodeID); n["x"] != 40 || n["y"] != -60 {
		t.Errorf("position %v,%v", n["x"], n["y"])
	}
	_, err = l.c.UpdateNode(ctx, tokAlice, missingID, pc3.NodeID, map[string]any{"name": "X"})
	wantStatus(t, err, 404, "Project ID", true)
	if _, err := l.c.UpdateNode(ctx, tokAlice, l.pid, "PC3", nil); !errors.Is(err, gns3.ErrInvalidID) {
		t.Errorf("invalid id: %v", err)
	}
}

func TestDeleteNode(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	sw := l.topo.Nodes["Switch1"]
	if err := l.c.DeleteNode(ctx, tokAlice, l.pid, sw); err != nil {
		t.Fatal(err)
	}
	if n := len(l.fake.Nodes(l.pid)); n != 3 {
		t.Errorf("%d nodes left", n)
	}
	if links, err := l.c.GetLinks(ctx, tokAlice, l.pid); err != nil || len(links) != 0 {
		t.Errorf("links of the deleted switch remain: %+v, %v", links, err)
	}
	wantStatus(t, l.c.DeleteNode(ctx, tokAlice, l.pid, sw), 404, "Node ID "+sw+" doesn't exist", false)
	wantStatus(t, l.c.DeleteNode(ctx, tokAlice, missingID, sw), 404, "Project ID "+missingID+" doesn't exist", true)
	if _, err := l.c.UpdateNode(ctx, tokAlice, l.pid, l.topo.Nodes["R1"], map[string]any{"locked": true}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, l.c.DeleteNode(ctx, tokAlice, l.pid, l.topo.Nodes["R1"]), 409, "Node R1 cannot be deleted because it is locked", false)
	if err := l.c.DeleteNode(ctx, tokAlice, l.pid, "R1"); !errors.Is(err, gns3.ErrInvalidID) {
		t.Errorf("invalid id: %v", err)
	}
}

// clock is a settable clock for the fake's transition delays.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestNodeAction(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	docker, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, l.tmpl.Docker, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	pc1, pc2, sw, r1 := l.topo.Nodes["PC1"], l.topo.Nodes["PC2"], l.topo.Nodes["Switch1"], l.topo.Nodes["R1"]
	tests := []struct {
		name, node, action, want string
	}{
		{"start vpcs", pc2, gns3.NodeActionStart, "started"},
		{"start again", pc2, gns3.NodeActionStart, "started"},
		{"stop vpcs", pc2, gns3.NodeActionStop, "stopped"},
		{"suspend vpcs does nothing", pc1, gns3.NodeActionSuspend, "started"},
		{"suspend stopped qemu does nothing", r1, gns3.NodeActionSuspend, "stopped"},
		{"start qemu", r1, gns3.NodeActionStart, "started"},
		{"suspend qemu", r1, gns3.NodeActionSuspend, "suspended"},
		{"resume qemu", r1, gns3.NodeActionStart, "started"},
		{"stop switch does nothing", sw, gns3.NodeActionStop, "started"},
		{"start docker", docker.NodeID, gns3.NodeActionStart, "started"},
		{"suspend docker", docker.NodeID, gns3.NodeActionSuspend, "suspended"},
		{"stop suspended docker", docker.NodeID, gns3.NodeActionStop, "stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := l.c.NodeAction(ctx, tokAlice, l.pid, tt.node, tt.action); err != nil {
				t.Fatal(err)
			}
			n, err := l.c.GetNode(ctx, tokAlice, l.pid, tt.node)
			if err != nil || n.Status != tt.want {
				t.Errorf("status %v, %v; want %s", n.Status, err, tt.want)
			}
		})
	}
	if got := l.fake.Hits("POST /v3/projects/" + l.pid + "/nodes/" + pc2 + "/start"); got != 2 {
		t.Errorf("%d start requests for PC2", got)
	}

	wantStatus(t, l.c.NodeAction(ctx, tokAlice, l.pid, missingID, "start"), 404, "Node ID "+missingID+" doesn't exist", false)
	wantStatus(t, l.c.NodeAction(ctx, tokAlice, missingID, pc1, "stop"), 404, "Project ID "+missingID+" doesn't exist", true)
	before := l.fake.Requests()
	for _, tt := range []struct{ node, action string }{{pc1, "reload"}, {pc1, ""}, {pc1, "START"}, {pc1, "start/../../x"}, {"PC1", "start"}} {
		err := l.c.NodeAction(ctx, tokAlice, l.pid, tt.node, tt.action)
		if err == nil {
			t.Errorf("%q %q: no error", tt.node, tt.action)
		}
		if d := gns3.Describe(err); !strings.HasPrefix(d, "unsupported node action") && !strings.HasPrefix(d, "invalid node id") {
			t.Errorf("%q %q: %s", tt.node, tt.action, d)
		}
	}
	if l.fake.Requests() != before {
		t.Error("a request was sent for an unsupported action or an invalid id")
	}
}

func TestNodeTransitionDelay(t *testing.T) {
	l := newLab(t)
	clk := &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	l.fake.SetClock(clk.now)
	ctx := context.Background()
	r1, pc2 := l.topo.Nodes["R1"], l.topo.Nodes["PC2"]
	l.fake.SetTransitionDelay(r1, 30*time.Second)
	l.fake.SetDefaultTransitionDelay(2 * time.Second)

	status := func(node string) string {
		t.Helper()
		n, err := l.c.GetNode(ctx, tokAlice, l.pid, node)
		if err != nil {
			t.Fatal(err)
		}
		return n.Status
	}
	if err := l.c.NodeAction(ctx, tokAlice, l.pid, r1, gns3.NodeActionStart); err != nil {
		t.Fatal(err)
	}
	if err := l.c.NodeAction(ctx, tokAlice, l.pid, pc2, gns3.NodeActionStart); err != nil {
		t.Fatal(err)
	}
	if s1, s2 := status(r1), status(pc2); s1 != "stopped" || s2 != "stopped" {
		t.Fatalf("right after start: %s %s", s1, s2)
	}
	clk.advance(2 * time.Second)
	if s1, s2 := status(r1), status(pc2); s1 != "stopped" || s2 != "started" {
		t.Fatalf("after 2s: %s %s", s1, s2)
	}
	clk.advance(27 * time.Second)
	if s := status(r1); s != "stopped" {
		t.Fatalf("after 29s: %s", s)
	}
	clk.advance(time.Second)
	if s := status(r1); s != "started" {
		t.Fatalf("after 30s: %s", s)
	}
	// The listing and the helpers see the same.
	if err := l.c.NodeAction(ctx, tokAlice, l.pid, r1, gns3.NodeActionStop); err != nil {
		t.Fatal(err)
	}
	if n := l.fake.Node(l.pid, r1); n["status"] != "started" {
		t.Errorf("fake shows %v while stopping", n["status"])
	}
	clk.advance(30 * time.Second)
	nodes, err := l.c.GetNodes(ctx, tokAlice, l.pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.NodeID == r1 && n.Status != "stopped" {
			t.Errorf("listing shows %s", n.Status)
		}
	}
}

func TestCreateLink(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	iou1, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, l.tmpl.IOUL3, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	iou2, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, l.tmpl.IOUL3, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	nat, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateNAT, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateCloud, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	pc1, pc2, sw, r1 := l.topo.Nodes["PC1"], l.topo.Nodes["PC2"], l.topo.Nodes["Switch1"], l.topo.Nodes["R1"]
	end := func(node string, a, p int) gns3.LinkEnd {
		return gns3.LinkEnd{NodeID: node, AdapterNumber: a, PortNumber: p}
	}

	tests := []struct {
		name           string
		project        string
		a, b           gns3.LinkEnd
		code           int
		msg            string
		projectMissing bool
		linkType       string
	}{
		{name: "router to switch", project: l.pid, a: end(r1, 1, 0), b: end(sw, 0, 2), linkType: "ethernet"},
		{name: "serial", project: l.pid, a: end(iou1.NodeID, 2, 0), b: end(iou2.NodeID, 3, 1), linkType: "serial"},
		{name: "nat to iou", project: l.pid, a: end(nat.NodeID, 0, 0), b: end(iou1.NodeID, 0, 0), linkType: "ethernet"},
		{name: "port of a used", project: l.pid, a: end(pc1, 0, 0), b: end(sw, 0, 3), code: 409, msg: "Port is already used"},
		{name: "port of b used", project: l.pid, a: end(sw, 0, 3), b: end(r1, 1, 0), code: 409, msg: "Port is already used"},
		{name: "unknown port", project: l.pid, a: end(pc2, 0, 1), b: end(sw, 0, 3), code: 404, msg: "Port 0/1 for PC2 not found"},
		{name: "unknown port b", project: l.pid, a: end(sw, 0, 3), b: end(r1, 4, 0), code: 404, msg: "Port 4/0 for R1 not found"},
		{name: "unknown node", project: l.pid, a: end(sw, 0, 3), b: end(missingID, 0, 0), code: 404, msg: "Node ID " + missingID + " doesn't exist"},
		{name: "to itself", project: l.pid, a: end(sw, 0, 3), b: end(sw, 0, 4), code: 409, msg: "Cannot connect to itself"},
		{name: "serial to ethernet", project: l.pid, a: end(iou1.NodeID, 2, 1), b: end(sw, 0, 5), code: 409,
			msg: "Connecting a serial interface to a ethernet interface is not allowed"},
		{name: "cloud to iou", project: l.pid, a: end(cloud.NodeID, 0, 0), b: end(iou2.NodeID, 0, 0), linkType: "ethernet"},
		{name: "unknown project", project: missingID, a: end(sw, 0, 3), b: end(pc2, 0, 0), code: 404,
			msg: "Project ID " + missingID + " doesn't exist", projectMissing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(l.fake.Links(l.pid))
			link, err := l.c.CreateLink(ctx, tokAlice, tt.project, tt.a, tt.b)
			if tt.code != 0 {
				wantStatus(t, err, tt.code, tt.msg, tt.projectMissing)
				if got := gns3.Describe(err); got != fmt.Sprintf("%d: %s", tt.code, tt.msg) {
					t.Errorf("Describe = %q", got)
				}
				if after := len(l.fake.Links(l.pid)); after != before {
					t.Errorf("a refused link was kept (%d -> %d)", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !gns3.ValidID(link.LinkID) || link.ProjectID != l.pid || link.LinkType != tt.linkType || len(link.Nodes) != 2 ||
				link.Nodes[0].NodeID != tt.a.NodeID || link.Nodes[0].AdapterNumber != tt.a.AdapterNumber ||
				link.Nodes[0].PortNumber != tt.a.PortNumber || link.Nodes[1].NodeID != tt.b.NodeID ||
				link.Nodes[1].AdapterNumber != tt.b.AdapterNumber || link.Nodes[1].PortNumber != tt.b.PortNumber {
				t.Errorf("link = %+v", link)
			}
			if lb := link.Nodes[0].Label; lb == nil || lb.Text != fmt.Sprintf("%d/%d", tt.a.AdapterNumber, tt.a.PortNumber) {
				t.Errorf("label = %+v", lb)
			}
			links, err := l.c.GetLinks(ctx, tokAlice, l.pid)
			if err != nil || len(links) != before+1 || links[len(links)-1].LinkID != link.LinkID {
				t.Errorf("listing after create: %d links, %v", len(links), err)
			}
		})
	}
	// nat and cloud cannot be linked (cloud's port is taken now, use a new one).
	cloud2, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateCloud, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	nat2, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateNAT, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.c.CreateLink(ctx, tokAlice, l.pid, end(cloud2.NodeID, 0, 0), end(nat2.NodeID, 0, 0))
	wantStatus(t, err, 409, "Connecting a cloud to a nat is not allowed", false)

	before := l.fake.Requests()
	for _, e := range []gns3.LinkEnd{end("PC1", 0, 0), end("", 0, 0)} {
		if _, err := l.c.CreateLink(ctx, tokAlice, l.pid, e, end(sw, 0, 3)); !errors.Is(err, gns3.ErrInvalidID) {
			t.Errorf("invalid node id %q: %v", e.NodeID, err)
		}
		if _, err := l.c.CreateLink(ctx, tokAlice, l.pid, end(sw, 0, 3), e); !errors.Is(err, gns3.ErrInvalidID) {
			t.Errorf("invalid node id %q as b: %v", e.NodeID, err)
		}
	}
	if _, err := l.c.CreateLink(ctx, tokAlice, "lab", end(sw, 0, 3), end(pc2, 0, 0)); !errors.Is(err, gns3.ErrInvalidID) {
		t.Errorf("invalid project id: %v", err)
	}
	if l.fake.Requests() != before {
		t.Error("a request was sent for an invalid id")
	}
}

func TestDeleteLink(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	id := l.topo.Links[0]
	if err := l.c.DeleteLink(ctx, tokAlice, l.pid, id); err != nil {
		t.Fatal(err)
	}
	if n := len(l.fake.Links(l.pid)); n != 2 {
		t.Errorf("%d links left", n)
	}
	// The freed port can be linked again.
	if _, err := l.c.CreateLink(ctx, tokAlice, l.pid,
		gns3.LinkEnd{NodeID: l.topo.Nodes["PC1"]}, gns3.LinkEnd{NodeID: l.topo.Nodes["Switch1"], PortNumber: 4}); err != nil {
		t.Errorf("relink PC1: %v", err)
	}
	wantStatus(t, l.c.DeleteLink(ctx, tokAlice, l.pid, id), 404, "Link ID "+id+" doesn't exist", false)
	wantStatus(t, l.c.DeleteLink(ctx, tokAlice, missingID, id), 404, "Project ID "+missingID+" doesn't exist", true)
	if err := l.c.DeleteLink(ctx, tokAlice, l.pid, "link-1"); !errors.Is(err, gns3.ErrInvalidID) {
		t.Errorf("invalid id: %v", err)
	}
}

func TestLabPermissions(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	pc2, sw := l.topo.Nodes["PC2"], l.topo.Nodes["Switch1"]
	l.fake.SetRequestAuthorizer(gns3test.DenyChanges(tokAlice))

	// Reading still works.
	if _, err := l.c.GetNodes(ctx, tokAlice, l.pid); err != nil {
		t.Fatalf("read: %v", err)
	}
	if _, err := l.c.GetTemplates(ctx, tokAlice); err != nil {
		t.Fatalf("templates: %v", err)
	}
	calls := []struct {
		name, privilege string
		call            func() error
	}{
		{"create node", "Node.Allocate", func() error {
			_, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateVPCS, 0, 0, "")
			return err
		}},
		{"update node", "Node.Modify", func() error {
			_, err := l.c.UpdateNode(ctx, tokAlice, l.pid, pc2, map[string]any{"name": "X"})
			return err
		}},
		{"delete node", "Node.Allocate", func() error { return l.c.DeleteNode(ctx, tokAlice, l.pid, pc2) }},
		{"start", "Node.PowerMgmt", func() error { return l.c.NodeAction(ctx, tokAlice, l.pid, pc2, gns3.NodeActionStart) }},
		{"create link", "Link.Allocate", func() error {
			_, err := l.c.CreateLink(ctx, tokAlice, l.pid, gns3.LinkEnd{NodeID: pc2, PortNumber: 0}, gns3.LinkEnd{NodeID: sw, PortNumber: 5})
			return err
		}},
		{"delete link", "Link.Allocate", func() error { return l.c.DeleteLink(ctx, tokAlice, l.pid, l.topo.Links[0]) }},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			msg := "Permission denied (privilege " + tt.privilege + " is required)"
			wantStatus(t, err, 403, msg, false)
			if !errors.Is(err, gns3.ErrForbidden) || !errors.Is(err, gns3.ErrUnauthorized) {
				t.Errorf("%v is not ErrForbidden", err)
			}
			if got, want := gns3.Describe(err), "403: the user lacks the GNS3 permission for this action ("+msg+")"; got != want {
				t.Errorf("Describe = %q, want %q", got, want)
			}
		})
	}
	if n := len(l.fake.Nodes(l.pid)); n != 4 {
		t.Errorf("the lab changed: %d nodes", n)
	}

	// Another user may change it; a single privilege can be withheld.
	l.fake.SetAuthorizer(gns3test.AcceptTokens(tokAlice, tokBob))
	if err := l.c.NodeAction(ctx, tokBob, l.pid, pc2, gns3.NodeActionStart); err != nil {
		t.Errorf("bob: %v", err)
	}
	l.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Node.PowerMgmt"))
	if err := l.c.NodeAction(ctx, tokBob, l.pid, pc2, gns3.NodeActionStop); !errors.Is(err, gns3.ErrForbidden) {
		t.Errorf("stop without Node.PowerMgmt: %v", err)
	}
	if _, err := l.c.UpdateNode(ctx, tokBob, l.pid, sw, map[string]any{"name": "Core"}); err != nil {
		t.Errorf("rename with Node.Modify: %v", err)
	}
}

func TestHangingController(t *testing.T) {
	l := newLab(t, gns3.WithCallTimeout(50*time.Millisecond))
	ctx := context.Background()
	pc1, sw := l.topo.Nodes["PC1"], l.topo.Nodes["Switch1"]
	l.fake.SetHang(true)
	calls := map[string]func() error{
		"projects":  func() error { _, err := l.c.ListProjects(ctx, tokAlice); return err },
		"project":   func() error { _, err := l.c.GetProject(ctx, tokAlice, l.pid); return err },
		"nodes":     func() error { _, err := l.c.GetNodes(ctx, tokAlice, l.pid); return err },
		"links":     func() error { _, err := l.c.GetLinks(ctx, tokAlice, l.pid); return err },
		"templates": func() error { _, err := l.c.GetTemplates(ctx, tokAlice); return err },
		"create": func() error {
			_, err := l.c.CreateNodeFromTemplate(ctx, tokAlice, l.pid, gns3test.TemplateVPCS, 0, 0, "")
			return err
		},
		"node":   func() error { _, err := l.c.GetNode(ctx, tokAlice, l.pid, pc1); return err },
		"update": func() error { _, err := l.c.UpdateNode(ctx, tokAlice, l.pid, pc1, map[string]any{"x": 1}); return err },
		"delete": func() error { return l.c.DeleteNode(ctx, tokAlice, l.pid, pc1) },
		"action": func() error { return l.c.NodeAction(ctx, tokAlice, l.pid, pc1, gns3.NodeActionStop) },
		"link": func() error {
			_, err := l.c.CreateLink(ctx, tokAlice, l.pid, gns3.LinkEnd{NodeID: pc1}, gns3.LinkEnd{NodeID: sw, PortNumber: 6})
			return err
		},
		"unlink": func() error { return l.c.DeleteLink(ctx, tokAlice, l.pid, l.topo.Links[0]) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := call()
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, gns3.ErrUnavailable) {
				t.Fatalf("err = %v, want a deadline", err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("gave up after %v", el)
			}
			if got := gns3.Describe(err); got != "the GNS3 controller did not answer in time" {
				t.Errorf("Describe = %q", got)
			}
			noSecret(t, err)
		})
	}
	if l.fake.Hits("GET /v3/projects/"+l.pid+"/nodes") != 1 {
		t.Error("hung requests are not counted")
	}

	// The caller's earlier deadline wins over the call timeout.
	slow := newClient(t, l.fake.URL) // call timeout 30 s
	if slow.CallTimeout() != gns3.DefaultTimeout {
		t.Errorf("default call timeout %v", slow.CallTimeout())
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := slow.GetNodes(dctx, tokAlice, l.pid); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller deadline: %v", err)
	}
	cctx, cancel2 := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel2() }()
	_, err := slow.GetNodes(cctx, tokAlice, l.pid)
	if !errors.Is(err, context.Canceled) || gns3.Describe(err) != "cancelled" {
		t.Errorf("cancelled: %v (%s)", err, gns3.Describe(err))
	}

	// An http.Client timeout reads the same.
	hc, err := gns3.New(l.fake.URL, &http.Client{Timeout: 30 * time.Millisecond}, gns3.WithCallTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	if hc.CallTimeout() != 0 {
		t.Errorf("call timeout %v", hc.CallTimeout())
	}
	_, err = hc.GetNodes(ctx, tokAlice, l.pid)
	if !errors.Is(err, context.DeadlineExceeded) || gns3.Describe(err) != "the GNS3 controller did not answer in time" {
		t.Errorf("http.Client timeout: %v (%s)", err, gns3.Describe(err))
	}

	l.fake.SetHang(false)
	if _, err := l.c.GetNodes(ctx, tokAlice, l.pid); err != nil {
		t.Errorf("after the hang: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(tokAlice))
	pid := fake.AddProject("lab", gns3.StatusOpened)
	topo := fake.SeedTopology(pid)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`[{"node_id": `))
	}))
	t.Cleanup(garbage.Close)
	leaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_ = json.NewEncoder(w).Encode(map[string]any{"message": "upstream http://10.0.0.1:3080/v3?token=" + tokAlice + " down"})
	}))
	t.Cleanup(leaky.Close)
	teapot := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(599)
	}))
	t.Cleanup(teapot.Close)
	dead := deadURL(t)
	ctx := context.Background()
	on := func(u string) *gns3.Client { return newClient(t, u) }

	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"nil", func() error { return nil }, ""},
		{"401", func() error { _, err := on(fake.URL).GetNodes(ctx, tokBob, pid); return err },
			"401: GNS3 did not accept the user's credentials"},
		{"403", func() error {
			fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Node.Audit"))
			defer fake.SetRequestAuthorizer(nil)
			_, err := on(fake.URL).GetNodes(ctx, tokAlice, pid)
			return err
		}, "403: the user lacks the GNS3 permission for this action (Permission denied (privilege Node.Audit is required))"},
		{"403 without message", func() error { return &gns3.StatusError{StatusCode: 403} },
			"403: the user lacks the GNS3 permission for this action"},
		{"404 node", func() error { _, err := on(fake.URL).GetNode(ctx, tokAlice, pid, missingID); return err },
			"404: Node ID " + missingID + " doesn't exist"},
		{"404 project", func() error { _, err := on(fake.URL).GetNode(ctx, tokAlice, missingID, topo.Nodes["PC1"]); return err },
			"404: Project ID " + missingID + " doesn't exist"},
		{"409", func() error {
			_, err := on(fake.URL).CreateLink(ctx, tokAlice, pid, gns3.LinkEnd{NodeID: topo.Nodes["PC1"]}, gns3.LinkEnd{NodeID: topo.Nodes["PC2"]})
			return err
		}, "409: Port is already used"},
		{"message with a URL", func() error { _, err := on(leaky.URL).GetNodes(ctx, tokAlice, pid); return err },
			"502: upstream <url> down"},
		{"no message", func() error { return &gns3.StatusError{Method: "GET", Path: "/v3/x", StatusCode: 503} },
			"503: Service Unavailable"},
		{"unknown status", func() error { _, err := on(teapot.URL).GetNodes(ctx, tokAlice, pid); return err },
			"599: GNS3 error"},
		{"invalid id", func() error { _, err := on(fake.URL).GetNode(ctx, tokAlice, pid, "PC1"); return err },
			`invalid node id "PC1" (GNS3 ids are UUIDs)`},
		{"invalid project id", func() error { _, err := on(fake.URL).GetProject(ctx, tokAlice, "lab"); return err },
			`invalid project id "lab" (GNS3 ids are UUIDs)`},
		{"bare invalid id", func() error { return fmt.Errorf("x: %w", gns3.ErrInvalidID) }, "invalid id (GNS3 ids are UUIDs)"},
		{"unreachable", func() error { _, err := on(dead).GetNodes(ctx, tokAlice, pid); return err },
			"GNS3 controller unavailable: connection refused"},
		{"invalid JSON", func() error { _, err := on(garbage.URL).GetNodes(ctx, tokAlice, pid); return err },
			"GNS3 controller unavailable: invalid JSON answer"},
		{"bare unavailable", func() error { return fmt.Errorf("x: %w", gns3.ErrUnavailable) }, "GNS3 controller unavailable"},
		{"deadline", func() error { return fmt.Errorf("gns3 GET /x: %w", context.DeadlineExceeded) },
			"the GNS3 controller did not answer in time"},
		{"canceled", func() error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := on(fake.URL).GetNodes(cctx, tokAlice, pid)
			return err
		}, "cancelled"},
		{"other", func() error { return errors.New("boom") }, "GNS3 request failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			got := gns3.Describe(err)
			if got != tt.want {
				t.Errorf("Describe(%v) = %q, want %q", err, got, tt.want)
			}
			for _, secret := range []string{"SECRET", tokAlice, tokBob, "Bearer", "Authorization"} {
				if strings.Contains(got, secret) {
					t.Errorf("Describe leaks %q: %q", secret, got)
				}
			}
			for _, u := range []string{fake.URL, leaky.URL, garbage.URL, teapot.URL, dead} {
				pu, _ := url.Parse(u)
				if strings.Contains(got, pu.Host) || strings.Contains(got, "http://") {
					t.Errorf("Describe names the controller: %q", got)
				}
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				var se *gns3.StatusError
				// Only a controller's own message may carry what the controller sent.
				if !errors.As(err, &se) {
					t.Errorf("error leaks the token: %v", err)
				}
			}
		})
	}
}
