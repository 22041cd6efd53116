package toolkit

import (
	"fmt"
	"strings"
	"testing"

	"agentchat/internal/gns3"
)

func TestResolveNode(t *testing.T) {
	nodes := Nodes{
		{NodeID: "11111111-1111-4111-8111-111111111111", Name: "R1"},
		{NodeID: "22222222-2222-4222-8222-222222222222", Name: "r1"},
		{NodeID: "33333333-3333-4333-8333-333333333333", Name: "PC1"},
		{NodeID: "44444444-4444-4444-8444-444444444444", Name: "Switch1"},
	}
	tests := []struct{ ref, want, err string }{
		{"R1", "11111111-1111-4111-8111-111111111111", ""},
		{"r1", "22222222-2222-4222-8222-222222222222", ""},
		{"pc1", "33333333-3333-4333-8333-333333333333", ""},
		{" Switch1 ", "44444444-4444-4444-8444-444444444444", ""},
		{"44444444-4444-4444-8444-444444444444", "44444444-4444-4444-8444-444444444444", ""},
		{"R9", "", "node 'R9' not found; nodes: R1, r1, PC1, Switch1"},
		{"R1 ", "11111111-1111-4111-8111-111111111111", ""},
	}
	for _, tt := range tests {
		n, err := nodes.Resolve(tt.ref)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Resolve(%q) = %v, %v; want error %q", tt.ref, n, err, tt.err)
			}
			continue
		}
		if err != nil || n.NodeID != tt.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tt.ref, n, err, tt.want)
		}
	}
	ambiguous := Nodes{{NodeID: "a", Name: "Core"}, {NodeID: "b", Name: "CORE"}}
	if _, err := ambiguous.Resolve("core"); err == nil || !strings.Contains(err.Error(), "ambiguous: Core (a), CORE (b)") {
		t.Errorf("ambiguous resolve: %v", err)
	}
	if _, err := (Nodes{}).Resolve("R1"); err == nil || err.Error() != "node 'R1' not found; the project has no nodes" {
		t.Errorf("empty project: %v", err)
	}
}

func TestResolveKinds(t *testing.T) {
	nodes := Nodes{{NodeID: "a", Name: "Core"}, {NodeID: "b", Name: "CORE"}, {NodeID: "c", Name: "Edge"}}
	// An id wins over a name, wherever it stands.
	if n, err := (Nodes{{NodeID: "x", Name: "b"}, {NodeID: "b", Name: "y"}}).Resolve("b"); err != nil || n.NodeID != "b" {
		t.Errorf("id after a name: %v, %v", n, err)
	}
	// An exact name wins over names equal ignoring case.
	if n, err := nodes.ResolveAs(DeviceKind, "CORE"); err != nil || n.NodeID != "b" {
		t.Errorf("exact name: %v, %v", n, err)
	}
	for ref, want := range map[string]string{
		"core": "device 'core' is ambiguous: Core (a), CORE (b); use the node_id",
		"R9":   "device 'R9' not found; nodes: Core, CORE, Edge",
	} {
		if _, err := nodes.ResolveAs(DeviceKind, ref); err == nil || err.Error() != want {
			t.Errorf("device %q: %v, want %q", ref, err, want)
		}
	}
	if _, err := (Nodes{}).ResolveAs(DeviceKind, "R1"); err == nil || err.Error() != "device 'R1' not found; the project has no nodes" {
		t.Errorf("empty project: %v", err)
	}

	ts := []gns3.Template{{TemplateID: "t1", Name: "Router"}, {TemplateID: "t2", Name: "ROUTER"}}
	id := func(t *gns3.Template) string { return t.TemplateID }
	name := func(t *gns3.Template) string { return t.Name }
	if _, err := Resolve(ts, TemplateKind, id, name, "router"); err == nil ||
		err.Error() != "template 'router' is ambiguous: Router (t1), ROUTER (t2); use the template_id" {
		t.Errorf("ambiguous template: %v", err)
	}
	if _, err := Resolve(nil, TemplateKind, id, name, "x"); err == nil || err.Error() != "template 'x' not found; no templates are available" {
		t.Errorf("no templates: %v", err)
	}
	// Resolution errors are the tools' own: Describe keeps their text.
	_, err := nodes.Resolve("R9")
	if got := Describe(err); got != err.Error() {
		t.Errorf("Describe = %q", got)
	}
}

func TestListNames(t *testing.T) {
	var names []string
	for i := range 32 {
		names = append(names, fmt.Sprintf("N%d", i))
	}
	got := ListNames(names)
	if !strings.HasPrefix(got, "N0, N1, ") || !strings.HasSuffix(got, ", N29 ... (2 more)") {
		t.Errorf("ListNames = %q", got)
	}
	if got := ListNames(names[:30]); strings.Contains(got, "more") {
		t.Errorf("30 names: %q", got)
	}
}
