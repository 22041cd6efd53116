package gns3tools

import (
	"encoding/json"
	"strings"
	"testing"

	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/toolkit/toolkittest"
)

func TestTopologyReader(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	before := e.Call(ToolTopologyReader, `{}`)
	r := before.item(t, 0, "success")
	if r["project_id"] != e.pid || len(r["nodes"].([]any)) != 4 || len(r["links"].([]any)) != 3 {
		t.Fatalf("topology %v", r)
	}
	// Freshly read: a change shows at once.
	e.Call(ToolDeleteNode, `{"nodes":["PC2"]}`)
	after := e.Call(ToolTopologyReader, ``).item(t, 0, "success")
	if len(after["nodes"].([]any)) != 3 || len(after["links"].([]any)) != 2 {
		t.Errorf("topology after the delete: %v", after)
	}
	b, _ := json.Marshal(after)
	if strings.Contains(string(b), "properties") || strings.Contains(string(b), "node_directory") {
		t.Errorf("the topology carries node properties: %s", b)
	}
	if !strings.Contains(string(b), topo.Nodes["R1"]) || !strings.Contains(string(b), `"name":"Gi0/0"`) {
		t.Errorf("the topology lacks R1 or its ports: %s", b)
	}
}

func TestGetTemplates(t *testing.T) {
	e := newEnv(t)
	tpl := e.fake.SeedTemplates()
	a := e.Call(ToolGetTemplates, `{}`)
	if !a.Success || a.Total != 9 {
		t.Fatalf("answer %+v", a)
	}
	var names []string
	for _, r := range a.Results {
		names = append(names, r["name"].(string))
		for k := range r {
			switch k {
			case "template_id", "name", "template_type", "category", "builtin", "status":
			default:
				t.Errorf("template field %s: %v", k, r)
			}
		}
		if r["template_id"] == tpl.IOSv && (r["template_type"] != "qemu" || r["category"] != "router" || r["builtin"] != false) {
			t.Errorf("IOSv: %v", r)
		}
		if r["template_id"] == gns3test.TemplateVPCS && (r["template_type"] != "vpcs" || r["builtin"] != true) {
			t.Errorf("VPCS: %v", r)
		}
	}
	if got := strings.Join(names, ","); got != "Alpine,Cisco 7200,Cisco IOSv,Cloud,Ethernet hub,Ethernet switch,IOU L3,NAT,VPCS" {
		t.Errorf("templates %s", got)
	}
}

func TestGateway(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTopology(e.pid)
	other := e.fake.AddProject("other lab", "closed")
	gw := e.ts.Gateway()

	a := e.Decode(e.Rec.Run(userCtx(), toolkittest.FindTool(t, gw, ToolListProjects), `{}`))
	if !a.Success || a.Total != 2 {
		t.Fatalf("projects %+v", a)
	}
	want := map[string][2]string{e.pid: {"lab", "opened"}, other: {"other lab", "closed"}}
	for _, r := range a.Results {
		w, ok := want[r["project_id"].(string)]
		if !ok || r["name"] != w[0] || r["project_status"] != w[1] {
			t.Errorf("project %v", r)
		}
	}

	start := toolkittest.FindTool(t, gw, ToolStartNode)
	a = e.Decode(e.Rec.Run(userCtx(), start, `{"project_id":"`+e.pid+`","nodes":["PC2"]}`))
	if r := a.item(t, 0, "success"); r["node_status"] != "started" {
		t.Errorf("start on /v1: %v", r)
	}
	a = e.Decode(e.Rec.Run(userCtx(), toolkittest.FindTool(t, gw, ToolTopologyReader), `{"project_id":"`+e.pid+`"}`))
	if r := a.item(t, 0, "success"); r["project_id"] != e.pid {
		t.Errorf("topology on /v1: %v", r)
	}
	a = e.Decode(e.Rec.Run(userCtx(), toolkittest.FindTool(t, gw, ToolCreateNode), `{"project_id":"`+other+`","nodes":[{"template":"VPCS"}]}`))
	if msg := errText(a.item(t, 0, "failed")); msg != "cannot create a node from template VPCS: 403: the user lacks the GNS3 permission for this action (The project is not opened)" {
		t.Errorf("create in a closed project: %q", msg)
	}
	if _, err := e.Rec.Run(userCtx(), start, `{"nodes":["PC2"]}`); err == nil || !strings.Contains(err.Error(), `missing properties: ["project_id"]`) {
		t.Errorf("no project_id: %v", err)
	}
	requests := e.fake.Requests()
	if _, err := e.Rec.Run(userCtx(), start, `{"project_id":"lab","nodes":["PC2"]}`); err == nil || !strings.Contains(err.Error(), "project_id: pattern") {
		t.Errorf("bad project_id: %v", err)
	}
	if e.fake.Requests() != requests {
		t.Errorf("invalid arguments reached GNS3")
	}
}
