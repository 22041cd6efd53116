package gns3tools

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/gns3/gns3test"
)

func TestStartWaitsForTheStatus(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	pc2, r1 := topo.Nodes["PC2"], topo.Nodes["R1"]
	e.fake.SetTransitionDelay(pc2, 150*time.Millisecond)
	e.fake.SetTransitionDelay(r1, 100*time.Millisecond)
	a := e.Call(ToolStartNode, `{"nodes":["PC2","`+r1+`","PC1","Switch1"]}`)
	if !a.Success {
		t.Fatalf("answer %+v", a)
	}
	for i, name := range []string{"PC2", "R1", "PC1", "Switch1"} {
		r := a.item(t, i, "success")
		if r["name"] != name || r["node_status"] != "started" {
			t.Errorf("item %d: %v", i, r)
		}
	}
	if note, _ := a.Results[2]["note"].(string); !strings.HasPrefix(note, "already started") {
		t.Errorf("PC1 was started already: %v", a.Results[2])
	}
	for name, id := range topo.Nodes {
		if st := e.fake.Node(e.pid, id)["status"]; st != "started" {
			t.Errorf("%s is %v", name, st)
		}
	}
	base := "/v3/projects/" + e.pid + "/nodes/"
	if n := e.fake.Hits("GET " + base + pc2); n < 2 {
		t.Errorf("PC2 was polled %d times; the poll should have seen it stopped, then started", n)
	}
	if n := e.fake.Hits("POST " + base + pc2 + "/start"); n != 1 {
		t.Errorf("PC2 was started %d times", n)
	}
	if n := e.fake.Hits("POST " + base + topo.Nodes["PC1"] + "/start"); n != 0 {
		t.Errorf("PC1, already started, was started %d times", n)
	}
}

func TestStartTimesOut(t *testing.T) {
	e := newEnv(t, fastWaits(80*time.Millisecond))
	topo := e.fake.SeedTopology(e.pid)
	e.fake.SetTransitionDelay(topo.Nodes["R1"], 30*time.Second)
	a := e.Call(ToolStartNode, `{"nodes":["R1","PC2"]}`)
	r := a.item(t, 0, "failed")
	if msg := errText(r); msg != "R1 did not become started within 80ms; status: stopped" {
		t.Errorf("error %q", msg)
	}
	if r["node_status"] != "stopped" {
		t.Errorf("node_status %v", r["node_status"])
	}
	a.item(t, 1, "success")
}

func TestStartCancelledWhileWaiting(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	e.fake.SetTransitionDelay(topo.Nodes["R1"], 30*time.Second)
	ctx, cancel := context.WithCancel(userCtx())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	out, err := e.Rec.Run(ctx, e.Tool(ToolStartNode), `{"nodes":["R1"]}`)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the tool returned %v after the cancel", took)
	}
	a := e.Decode(out, err)
	if msg := errText(a.item(t, 0, "failed")); msg != "stopped waiting for R1 to become started (cancelled); status: stopped" {
		t.Errorf("error %q", msg)
	}
}

func TestStopAndSuspend(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	e.fake.SetDefaultTransitionDelay(30 * time.Millisecond)
	e.fake.SetNodeStatus(e.pid, topo.Nodes["R1"], "started")

	a := e.Call(ToolSuspendNode, `{"nodes":["R1","PC1","PC2","Switch1"]}`)
	if r := a.item(t, 0, "success"); r["node_status"] != "suspended" {
		t.Errorf("R1: %v", r)
	}
	wantErr := []string{
		"",
		"PC1 is a vpcs node, which GNS3 cannot suspend; stop it instead",
		"PC2 is a vpcs node, which GNS3 cannot suspend; stop it instead",
		"Switch1 is a built-in ethernet_switch, always running: it cannot be suspended",
	}
	for i, w := range wantErr[1:] {
		if msg := errText(a.item(t, i+1, "failed")); msg != w {
			t.Errorf("item %d: %q, want %q", i+1, msg, w)
		}
	}

	a = e.Call(ToolStopNode, `{"nodes":["R1","PC1","PC2"]}`)
	if !a.Success {
		t.Fatalf("stop: %+v", a)
	}
	for i := range 3 {
		if r := a.item(t, i, "success"); r["node_status"] != "stopped" {
			t.Errorf("item %d: %v", i, r)
		}
	}
	if st := e.fake.Node(e.pid, topo.Nodes["R1"])["status"]; st != "stopped" {
		t.Errorf("R1 is %v", st)
	}
	a = e.Call(ToolSuspendNode, `{"nodes":["R1"]}`)
	if msg := errText(a.item(t, 0, "failed")); msg != "R1 is stopped; only a started node can be suspended" {
		t.Errorf("suspend a stopped node: %q", msg)
	}
}

func TestActionForbiddenForOneNode(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	r1 := topo.Nodes["R1"]
	e.fake.SetRequestAuthorizer(func(r *http.Request, _, _ string) int {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, r1) {
			return http.StatusForbidden
		}
		return http.StatusOK
	})
	a := e.Call(ToolStartNode, `{"nodes":["R1","PC2"]}`)
	if msg := errText(a.item(t, 0, "failed")); msg != "cannot start R1: 403: the user lacks the GNS3 permission for this action (Permission denied (privilege Node.PowerMgmt is required))" {
		t.Errorf("error %q", msg)
	}
	a.item(t, 1, "success")

	e.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Node.Audit"))
	a = e.Call(ToolStopNode, `{"nodes":["PC1","PC2"]}`)
	for i := range 2 {
		if msg := errText(a.item(t, i, "failed")); !strings.HasPrefix(msg, "cannot read the project's nodes: 403: the user lacks the GNS3 permission") {
			t.Errorf("item %d: %q", i, msg)
		}
	}
}

func TestDuplicateNodeReference(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	a := e.Call(ToolStartNode, `{"nodes":["PC2","`+topo.Nodes["PC2"]+`"]}`)
	if !a.Success {
		t.Fatalf("answer %+v", a)
	}
	if note, _ := a.Results[1]["note"].(string); note != "same node as item 1" {
		t.Errorf("second reference: %v", a.Results[1])
	}
	if n := e.fake.Hits("POST /v3/projects/" + e.pid + "/nodes/" + topo.Nodes["PC2"] + "/start"); n != 1 {
		t.Errorf("PC2 started %d times", n)
	}
}
