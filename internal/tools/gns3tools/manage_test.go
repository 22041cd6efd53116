package gns3tools

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestRenameNodes(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	a := e.Call(ToolUpdateNodeName, `{"nodes":[
		{"node":"PC2","new_name":"Client-2"},
		{"node":"PC1","new_name":"Client-1"},
		{"node":"R1","new_name":"PC1"},
		{"node":"R9","new_name":"R10"},
		{"node":"switch1","new_name":"Core"}]}`)
	if r := a.item(t, 0, "success"); r["old_name"] != "PC2" || r["name"] != "Client-2" || r["node_id"] != topo.Nodes["PC2"] {
		t.Errorf("rename PC2: %v", r)
	}
	if name := e.fake.Node(e.pid, topo.Nodes["PC2"])["name"]; name != "Client-2" {
		t.Errorf("PC2 is named %v", name)
	}
	if msg := errText(a.item(t, 1, "failed")); msg != "cannot rename PC1: 409: Sorry, it is not possible to rename a node that is already powered on" {
		t.Errorf("rename a started node: %q", msg)
	}
	if msg := errText(a.item(t, 2, "failed")); !strings.HasPrefix(msg, "GNS3 named the node PC") || !strings.Contains(msg, "instead of PC1") {
		t.Errorf("rename to a used name: %q", msg)
	}
	if msg := errText(a.item(t, 3, "failed")); !strings.HasPrefix(msg, "node 'R9' not found; nodes: ") {
		t.Errorf("unknown node: %q", msg)
	}
	if r := a.item(t, 4, "success"); r["name"] != "Core" {
		t.Errorf("rename switch1: %v", r)
	}
}

func TestDeleteNodesAndLinks(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	a := e.Call(ToolDeleteNode, `{"nodes":["PC2","nope","`+topo.Nodes["PC2"]+`"]}`)
	if r := a.item(t, 0, "success"); r["name"] != "PC2" || r["node_id"] != topo.Nodes["PC2"] {
		t.Errorf("delete PC2: %v", r)
	}
	if msg := errText(a.item(t, 1, "failed")); !strings.HasPrefix(msg, "node 'nope' not found") {
		t.Errorf("unknown node: %q", msg)
	}
	if msg := errText(a.item(t, 2, "failed")); msg != "node PC2 is named twice in this call" {
		t.Errorf("twice: %q", msg)
	}
	if e.fake.Node(e.pid, topo.Nodes["PC2"]) != nil || len(e.fake.Links(e.pid)) != 2 {
		t.Errorf("PC2 or its link is still there")
	}

	gone := uuid.NewString()
	a = e.Call(ToolDeleteLink, `{"links":["`+topo.Links[0]+`","`+gone+`"]}`)
	a.item(t, 0, "success")
	if msg := errText(a.item(t, 1, "failed")); msg != "404: Link ID "+gone+" doesn't exist" {
		t.Errorf("unknown link: %q", msg)
	}
	if links := e.fakeLinks(); len(links) != 1 {
		t.Errorf("links left: %v", links)
	}
}
