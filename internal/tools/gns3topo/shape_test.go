package gns3topo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"

	"github.com/google/uuid"
)

// decode turns raw GNS3 payloads into the client's types, as the client
// would.
func decode[T any](t *testing.T, raw []map[string]any) []T {
	t.Helper()
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// seeded is the gns3test lab (PC1, PC2, Switch1, R1 and three links) as the
// client's types.
func seeded(t *testing.T) (pid string, nodes []gns3.Node, links []gns3.Link, ids map[string]string) {
	t.Helper()
	pid = uuid.NewString()
	ids = map[string]string{}
	var rawNodes []map[string]any
	for _, n := range []map[string]any{
		gns3test.VPCSNode(pid, "PC1", "started", 5001, 0, 0),
		gns3test.VPCSNode(pid, "PC2", "stopped", 5002, 0, 0),
		gns3test.SwitchNode(pid, "Switch1", 0, 0),
		gns3test.QemuRouterNode(pid, "R1", 0, 0),
	} {
		ids[n["name"].(string)] = n["node_id"].(string)
		rawNodes = append(rawNodes, n)
	}
	rawLinks := []map[string]any{
		gns3test.LinkPayload(pid, ids["PC1"], 0, 0, "e0", ids["Switch1"], 0, 0, "e0"),
		gns3test.LinkPayload(pid, ids["PC2"], 0, 0, "e0", ids["Switch1"], 0, 1, "e1"),
		gns3test.LinkPayload(pid, ids["R1"], 0, 0, "gi0/0", ids["Switch1"], 0, 7, "e7"),
	}
	return pid, decode[gns3.Node](t, rawNodes), decode[gns3.Link](t, rawLinks), ids
}

func TestShapeSeededLab(t *testing.T) {
	pid, nodes, links, ids := seeded(t)
	topo := Shape(pid, nodes, links, Limits{})
	if topo.ProjectID != pid || len(topo.Nodes) != 4 || len(topo.Links) != 3 || topo.Truncated != "" {
		t.Fatalf("topology = %+v", topo)
	}
	pc1 := topo.Nodes[0]
	if pc1.NodeID != ids["PC1"] || pc1.Name != "PC1" || pc1.NodeType != "vpcs" || pc1.Status != "started" ||
		pc1.ConsoleType != "telnet" || pc1.Console == nil || *pc1.Console != 5001 {
		t.Errorf("PC1 = %+v", pc1)
	}
	if want := []Port{{Name: "Ethernet0", AdapterNumber: 0, PortNumber: 0, LinkType: "ethernet"}}; fmt.Sprint(pc1.Ports) != fmt.Sprint(want) {
		t.Errorf("PC1 ports = %+v", pc1.Ports)
	}
	sw := topo.Nodes[2]
	if sw.Name != "Switch1" || sw.Console != nil || len(sw.Ports) != 8 || sw.Ports[7].Name != "Ethernet7" || sw.PortsOmitted != 0 {
		t.Errorf("Switch1 (console_type none) = %+v", sw)
	}
	r1 := topo.Nodes[3]
	if r1.Status != "stopped" || len(r1.Ports) != 4 || r1.Ports[2] != (Port{Name: "Gi0/2", AdapterNumber: 2, PortNumber: 0, LinkType: "ethernet"}) {
		t.Errorf("R1 = %+v", r1)
	}
	wantLinks := [][2]LinkEnd{
		{{ids["PC1"], "PC1", 0, 0, "Ethernet0"}, {ids["Switch1"], "Switch1", 0, 0, "Ethernet0"}},
		{{ids["PC2"], "PC2", 0, 0, "Ethernet0"}, {ids["Switch1"], "Switch1", 0, 1, "Ethernet1"}},
		{{ids["R1"], "R1", 0, 0, "Gi0/0"}, {ids["Switch1"], "Switch1", 0, 7, "Ethernet7"}},
	}
	for i, l := range topo.Links {
		if l.LinkID != links[i].LinkID || l.LinkType != "ethernet" || l.Suspend || len(l.Nodes) != 2 ||
			l.Nodes[0] != wantLinks[i][0] || l.Nodes[1] != wantLinks[i][1] {
			t.Errorf("link %d = %+v, want ends %+v", i, l, wantLinks[i])
		}
	}

	js, err := topo.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Topology
	if err := json.Unmarshal([]byte(js), &back); err != nil || len(back.Nodes) != 4 || strings.Contains(js, "\n") {
		t.Fatalf("JSON is not compact or does not round-trip (%v): %s", err, js)
	}
	// Properties, paths, hosts, MACs, images and layout are left out.
	for _, leak := range []string{"properties", "hda_disk_image", "vios-adventerprisek9", "qemu_path", "ports_mapping",
		"node_directory", "/home/gns3", "console_host", "127.0.0.1", "mac_address", "0c:8a:5d", "compute_id",
		"template_id", "symbol", "label", "filters", "capture", "\"x\"", "data_link_types"} {
		if strings.Contains(js, leak) {
			t.Errorf("topology JSON holds %q: %s", leak, js)
		}
	}
	sec := Section(topo)
	if !strings.HasPrefix(sec, Heading+"\n") || !strings.HasSuffix(sec, js) || strings.Contains(sec, "large") {
		t.Errorf("section = %s", sec)
	}
}

func TestShapeLimits(t *testing.T) {
	pid, nodes, links, ids := seeded(t)
	tests := []struct {
		name        string
		limits      Limits
		nodes       []string
		links       int
		portsOf     map[string]int // listed ports of a listed node
		omittedOf   map[string]int
		truncations []string
	}{
		{"within", Limits{MaxNodes: 4, MaxLinks: 3, MaxPorts: 8}, []string{"PC1", "PC2", "Switch1", "R1"}, 3,
			map[string]int{"Switch1": 8, "R1": 4}, nil, nil},
		{"nodes", Limits{MaxNodes: 2}, []string{"PC1", "PC2"}, 3, nil, nil,
			[]string{"only the first 2 of 4 nodes are listed"}},
		{"links", Limits{MaxLinks: 1}, []string{"PC1", "PC2", "Switch1", "R1"}, 1, nil, nil,
			[]string{"only the first 1 of 3 links are listed"}},
		{"ports", Limits{MaxPorts: 3}, []string{"PC1", "PC2", "Switch1", "R1"}, 3,
			map[string]int{"PC1": 1, "Switch1": 3, "R1": 3}, map[string]int{"Switch1": 5, "R1": 1},
			[]string{"2 node(s) list only their first 3 ports"}},
		{"all", Limits{MaxNodes: 3, MaxLinks: 2, MaxPorts: 2}, []string{"PC1", "PC2", "Switch1"}, 2,
			map[string]int{"Switch1": 2}, map[string]int{"Switch1": 6},
			[]string{"3 of 4 nodes", "2 of 3 links", "1 node(s) list only their first 2 ports"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topo := Shape(pid, nodes, links, tt.limits)
			var names []string
			for _, n := range topo.Nodes {
				names = append(names, n.Name)
				if want, ok := tt.portsOf[n.Name]; ok && len(n.Ports) != want {
					t.Errorf("%s: %d ports listed, want %d", n.Name, len(n.Ports), want)
				}
				if n.PortsOmitted != tt.omittedOf[n.Name] {
					t.Errorf("%s: ports_omitted %d, want %d", n.Name, n.PortsOmitted, tt.omittedOf[n.Name])
				}
			}
			if strings.Join(names, ",") != strings.Join(tt.nodes, ",") || len(topo.Links) != tt.links {
				t.Fatalf("nodes %v, %d links", names, len(topo.Links))
			}
			if (topo.Truncated == "") != (len(tt.truncations) == 0) {
				t.Fatalf("truncated = %q", topo.Truncated)
			}
			for _, want := range tt.truncations {
				if !strings.Contains(topo.Truncated, want) {
					t.Errorf("truncated = %q, want %q", topo.Truncated, want)
				}
			}
			if len(tt.truncations) > 0 && !strings.Contains(Section(topo), "The project is large: "+topo.Truncated) {
				t.Errorf("section does not say what was left out: %s", Section(topo))
			}
			// Link ends are named even when their node is not listed.
			for _, l := range topo.Links {
				for _, e := range l.Nodes {
					if e.NodeName == "" || e.PortName == "" {
						t.Errorf("unnamed link end %+v", e)
					}
				}
			}
		})
	}
	if e := Shape(pid, nodes, links, Limits{MaxNodes: 1}).Links[2].Nodes[0]; e.NodeID != ids["R1"] || e.NodeName != "R1" || e.PortName != "Gi0/0" {
		t.Errorf("end of an unlisted node = %+v", e)
	}
}

func TestShapeDefaultLimits(t *testing.T) {
	pid := uuid.NewString()
	var nodes []gns3.Node
	var links []gns3.Link
	for i := range 250 {
		nodes = append(nodes, gns3.Node{NodeID: uuid.NewString(), Name: fmt.Sprintf("PC%d", i), NodeType: "vpcs", Status: "stopped",
			Ports: []gns3.Port{{Name: "Ethernet0", LinkType: "ethernet"}}})
	}
	for i := range 450 {
		links = append(links, gns3.Link{LinkID: uuid.NewString(), LinkType: "ethernet", Nodes: []gns3.LinkEnd{
			{NodeID: nodes[i%250].NodeID}, {NodeID: nodes[(i+1)%250].NodeID},
		}})
	}
	topo := Shape(pid, nodes, links, Limits{})
	if len(topo.Nodes) != DefaultMaxNodes || len(topo.Links) != DefaultMaxLinks ||
		topo.Truncated != "only the first 200 of 250 nodes are listed; only the first 400 of 450 links are listed" {
		t.Fatalf("%d nodes, %d links, truncated %q", len(topo.Nodes), len(topo.Links), topo.Truncated)
	}
	js, err := topo.JSON()
	if err != nil {
		t.Fatal(err)
	}
	// Bounded whatever the project: about 300 bytes a node or link (three
	// UUIDs make a third of a link).
	if len(js) > 320*(DefaultMaxNodes+DefaultMaxLinks) {
		t.Fatalf("topology JSON is %d bytes", len(js))
	}
}

func TestShapeOddInput(t *testing.T) {
	pid := uuid.NewString()
	long := strings.Repeat("é", 150)
	nodes := []gns3.Node{{NodeID: "n1", Name: "R&D <core> " + long, NodeType: "qemu", Status: "started",
		Properties: map[string]any{"password": "hunter2"}}}
	links := []gns3.Link{
		{LinkID: "l1", LinkType: "serial", Suspend: true, Nodes: []gns3.LinkEnd{
			{NodeID: "n1", AdapterNumber: 1, PortNumber: 3, Label: &gns3.Label{Text: "s1/3"}},
			{NodeID: "gone", AdapterNumber: 0, PortNumber: 0},
			{NodeID: "extra"},
		}},
	}
	topo := Shape(pid, nodes, links, Limits{})
	n := topo.Nodes[0]
	if n.Ports == nil || n.Console != nil || !strings.HasPrefix(n.Name, "R&D <core> ") || !strings.HasSuffix(n.Name, "...") ||
		len([]rune(n.Name)) != maxText+3 {
		t.Errorf("node = %+v", n)
	}
	l := topo.Links[0]
	if !l.Suspend || l.LinkType != "serial" || len(l.Nodes) != 2 ||
		l.Nodes[0] != (LinkEnd{NodeID: "n1", NodeName: n.Name, AdapterNumber: 1, PortNumber: 3, PortName: "s1/3"}) ||
		l.Nodes[1] != (LinkEnd{NodeID: "gone"}) {
		t.Errorf("link = %+v", l)
	}
	js, _ := topo.JSON()
	if !strings.Contains(js, `"name":"R&D <core> `) || strings.Contains(js, "hunter2") || !strings.Contains(js, `"ports":[]`) {
		t.Errorf("JSON = %s", js)
	}
	empty, _ := Shape(pid, nil, nil, Limits{}).JSON()
	if empty != `{"project_id":"`+pid+`","nodes":[],"links":[]}` {
		t.Errorf("empty project = %s", empty)
	}
}

func TestReason(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	tests := []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{live, errors.Join(errFetchTimeout, context.DeadlineExceeded), "did not answer in time"},
		{cancelled, fmt.Errorf("gns3 GET /x: %w", context.Canceled), "request was cancelled"},
		{live, fmt.Errorf("%w: project id %q", gns3.ErrInvalidID, "x"), "not a valid GNS3 project id"},
		{live, fmt.Errorf("project p: %w: %w", gns3.ErrProjectNotFound, &gns3.StatusError{StatusCode: 404}), "does not know this project"},
		{live, &gns3.StatusError{StatusCode: 403, Message: "Permission denied"}, "does not allow this user"},
		{live, &gns3.StatusError{StatusCode: 401, Message: "Could not validate credentials"}, "did not accept the user's credentials"},
		{live, fmt.Errorf("gns3 GET /x: %w: dial tcp: connection refused", gns3.ErrUnavailable), "could not be reached"},
		{live, &gns3.StatusError{Method: "GET", Path: "/v3/projects/p/nodes", StatusCode: 502, Message: "upstream http://10.0.0.1 down"}, "answered with an error (HTTP 502 Bad Gateway)"},
		{live, errors.New("boom"), "unexpected answer"},
	}
	for _, tt := range tests {
		got := reason(tt.ctx, tt.err)
		if !strings.Contains(got, tt.want) || strings.Contains(got, "http://") || strings.Contains(got, "/v3/") {
			t.Errorf("reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
