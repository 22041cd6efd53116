package gns3tools

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/gns3/gns3test"
)

// anyStrings turns a JSON array of strings into a []string.
func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

func seq(format string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

func TestCreateNodesOfSeveralTypes(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTemplates()
	e.fake.SeedTopology(e.pid)
	a := e.Call(ToolCreateNode, `{"nodes":[
		{"template":"vpcs"},
		{"template":"Cisco IOSv","name":"R10"},
		{"template":"`+gns3test.TemplateEthernetSwitch+`"},
		{"template":"cisco 7200","name":"Edge"},
		{"template":"IOU L3","name":"IOU-A"},
		{"template":"Alpine"},
		{"template":"VPCS","name":"Far","x":900,"y":-600}]}`)
	if !a.Success || a.Total != 7 {
		t.Fatalf("answer %+v", a)
	}
	want := []struct {
		name, nodeType string
		ports          []string
	}{
		{"", "vpcs", []string{"Ethernet0"}},
		{"R10", "qemu", seq("Gi0/%d", 0, 3)},
		{"", "ethernet_switch", seq("Ethernet%d", 0, 7)},
		{"Edge", "dynamips", append([]string{"FastEthernet0/0"}, seq("Ethernet1/%d", 0, 3)...)},
		{"IOU-A", "iou", append(append(append(seq("Ethernet0/%d", 0, 3), seq("Ethernet1/%d", 0, 3)...), seq("Serial2/%d", 0, 3)...), seq("Serial3/%d", 0, 3)...)},
		{"", "docker", []string{"eth0", "eth1"}},
		{"Far", "vpcs", []string{"Ethernet0"}},
	}
	for i, w := range want {
		r := a.item(t, i, "success")
		if w.name != "" && r["name"] != w.name {
			t.Errorf("item %d: name %v, want %s", i, r["name"], w.name)
		}
		if s, _ := r["name"].(string); s == "" {
			t.Errorf("item %d: no name: %v", i, r)
		}
		if r["node_type"] != w.nodeType {
			t.Errorf("item %d: node_type %v, want %s", i, r["node_type"], w.nodeType)
		}
		if got := anyStrings(r["ports"]); !slices.Equal(got, w.ports) {
			t.Errorf("item %d: ports %v, want %v", i, got, w.ports)
		}
		id, _ := r["node_id"].(string)
		n := e.fake.Node(e.pid, id)
		if n == nil || n["name"] != r["name"] {
			t.Errorf("item %d: the controller has %v", i, n)
		}
	}
	if far := a.Results[6]; far["x"] != 900.0 || far["y"] != -600.0 {
		t.Errorf("placed node at %v,%v, want 900,-600", far["x"], far["y"])
	}
	// No two nodes of the project overlap, old or new.
	nodes := e.fake.Nodes(e.pid)
	if len(nodes) != 4+7 {
		t.Fatalf("%d nodes in the project, want 11", len(nodes))
	}
	box := func(n map[string]any) rect {
		return rect{int(n["x"].(int)), int(n["y"].(int)), num(n["width"]), num(n["height"])}
	}
	for i := range nodes {
		for j := range i {
			if intersects(box(nodes[i]), box(nodes[j])) {
				t.Errorf("%s at %v overlaps %s at %v", nodes[i]["name"], box(nodes[i]), nodes[j]["name"], box(nodes[j]))
			}
		}
	}
}

// num reads a JSON number held as int or float64.
func num(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

func TestCreateNodeByTemplateNameAndID(t *testing.T) {
	e := newEnv(t)
	tpl := e.fake.SeedTemplates()
	e.fake.AddTemplate(gns3test.QemuTemplate("", "Router", 2, "e{0}"))
	e.fake.AddTemplate(gns3test.QemuTemplate("", "ROUTER", 2, "e{0}"))
	a := e.Call(ToolCreateNode, `{"nodes":[
		{"template":"`+tpl.IOSv+`"},
		{"template":"Juniper vMX"},
		{"template":"router"},
		{"template":"Router"},
		{"template":" alpine "}]}`)
	if a.Success || a.Successful != 3 || a.Failed != 2 {
		t.Fatalf("answer %+v", a)
	}
	if r := a.item(t, 0, "success"); r["node_type"] != "qemu" || r["template"] != tpl.IOSv {
		t.Errorf("by id: %v", r)
	}
	if msg := errText(a.item(t, 1, "failed")); !strings.HasPrefix(msg, "template 'Juniper vMX' not found; templates: Alpine, Cisco 7200, Cisco IOSv,") {
		t.Errorf("unknown template: %q", msg)
	}
	if msg := errText(a.item(t, 2, "failed")); !strings.HasPrefix(msg, "template 'router' is ambiguous: ") || !strings.Contains(msg, "Router (") || !strings.Contains(msg, "ROUTER (") {
		t.Errorf("ambiguous template: %q", msg)
	}
	a.item(t, 3, "success") // the exact name wins
	a.item(t, 4, "success")
	if n := len(e.fake.Nodes(e.pid)); n != 3 {
		t.Errorf("%d nodes created, want 3", n)
	}
}

func TestCreateNodeNameTaken(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTopology(e.pid)
	a := e.Call(ToolCreateNode, `{"nodes":[{"template":"VPCS","name":"PC1"}]}`)
	r := a.item(t, 0, "failed")
	if msg := errText(r); !strings.Contains(msg, "created, but GNS3 named the node") || !strings.Contains(msg, "instead of PC1") {
		t.Errorf("error %q", msg)
	}
	if id, _ := r["node_id"].(string); e.fake.Node(e.pid, id) == nil {
		t.Errorf("the created node is not reported: %v", r)
	}
}
