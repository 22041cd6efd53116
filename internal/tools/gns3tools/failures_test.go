package gns3tools

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/agent"
	"agentchat/internal/tools/gns3topo"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// everyCall is one valid call of every project tool, on the seeded lab.
var everyCall = map[string]string{
	ToolTopologyReader: `{}`,
	ToolGetTemplates:   `{}`,
	ToolCreateNode:     `{"nodes":[{"template":"VPCS","name":"PC9"},{"template":"VPCS"}]}`,
	ToolCreateLink:     `{"links":[{"node_a":"PC2","port_a":"e0","node_b":"Switch1","port_b":"e5"}]}`,
	ToolStartNode:      `{"nodes":["PC2","R1"]}`,
	ToolStopNode:       `{"nodes":["PC1"]}`,
	ToolSuspendNode:    `{"nodes":["R1"]}`,
	ToolUpdateNodeName: `{"nodes":[{"node":"PC2","new_name":"PC7"}]}`,
	ToolDeleteNode:     `{"nodes":["PC2","R1"]}`,
	ToolDeleteLink:     `{"links":["` + uuid.NewString() + `"]}`,
	ToolLinkConditions: `{"action":"set","link":"PC1:e0","conditions":{"packet_loss":5}}`,
	ToolAnalyzeTraffic: `{"link":"PC1:e0","seconds":1}`,
}

// failEvery runs every project tool and checks that each answers all its
// items failed with an error for which ok holds.
func failEvery(t *testing.T, e *env, tools []agent.Tool, ok func(string) bool) {
	t.Helper()
	for _, tl := range tools {
		start := time.Now()
		a := e.Decode(e.Rec.Run(userCtx(), tl, everyCall[tl.Name]))
		if a.Success || a.Failed != a.Total || a.Total == 0 {
			t.Errorf("%s: %+v", tl.Name, a)
		}
		for _, r := range a.Results {
			if !ok(errText(r)) {
				t.Errorf("%s: error %q", tl.Name, errText(r))
			}
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s took %v", tl.Name, took)
		}
	}
}

func TestUnknownProject(t *testing.T) {
	e := newEnv(t)
	gone := uuid.NewString()
	failEvery(t, e, e.ts.Project(gone)[2:], func(msg string) bool { // templates are not per project
		return strings.HasSuffix(msg, "404: Project ID "+gone+" doesn't exist")
	})
	a := e.Decode(e.Rec.Run(userCtx(), toolkittest.FindTool(t, e.ts.Project(gone), ToolTopologyReader), `{}`))
	if msg := errText(a.item(t, 0, "failed")); msg != "404: Project ID "+gone+" doesn't exist" {
		t.Errorf("topology: %q", msg)
	}
}

func TestHangingController(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTopology(e.pid)
	e.rebuild(150 * time.Millisecond)
	e.fake.SetHang(true)
	failEvery(t, e, e.ts.Project(e.pid), func(msg string) bool {
		return strings.HasSuffix(msg, "the GNS3 controller did not answer in time")
	})
}

func TestHangDuringTheWait(t *testing.T) {
	e := newEnv(t)
	e.rebuild(100*time.Millisecond, fastWaits(400*time.Millisecond))
	topo := e.fake.SeedTopology(e.pid)
	e.fake.SetTransitionDelay(topo.Nodes["R1"], time.Hour)
	time.AfterFunc(100*time.Millisecond, func() { e.fake.SetHang(true) })
	a := e.Call(ToolStartNode, `{"nodes":["R1"]}`)
	if msg := errText(a.item(t, 0, "failed")); msg != "R1 did not become started within 400ms; status: stopped; last poll: the GNS3 controller did not answer in time" {
		t.Errorf("error %q", msg)
	}
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTopology(e.pid)
	e.fake.SetAuthorizer(func(string, string) int { return http.StatusUnauthorized })
	failEvery(t, e, e.ts.Project(e.pid), func(msg string) bool {
		return strings.HasSuffix(msg, "401: GNS3 did not accept the user's credentials")
	})
}

// TestTokenGoesOnlyToGNS3 runs every tool, on the project chat and on
// /v1, against a lab that works and one that refuses, and scans every
// answer, error and log line for the token (newEnv's cleanup); GNS3 got it.
func TestTokenGoesOnlyToGNS3(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTemplates()
	e.fake.SeedTopology(e.pid)
	for _, tl := range e.ts.Project(e.pid) {
		e.Decode(e.Rec.Run(userCtx(), tl, everyCall[tl.Name]))
		_, _ = e.Rec.Run(userCtx(), tl, `{"nodes":"PC1"}`) // invalid arguments
	}
	if got := e.fake.LastAuthorization(); got != "Bearer "+userToken {
		t.Errorf("GNS3 got Authorization %q", got)
	}
	for _, tl := range e.ts.Gateway() {
		args := strings.Replace(cmpArgs(everyCall[tl.Name]), "{", `{"project_id":"`+e.pid+`",`, 1)
		if tl.Name == ToolListProjects {
			args = `{}`
		}
		args = strings.Replace(args, `",}`, `"}`, 1)
		e.Decode(e.Rec.Run(userCtx(), tl, args))
	}
	e.fake.SetAuthorizer(func(string, string) int { return http.StatusForbidden })
	for _, tl := range e.ts.Project(e.pid) {
		e.Decode(e.Rec.Run(userCtx(), tl, everyCall[tl.Name]))
	}
	// The topology provider's log lines are scanned too.
	_ = gns3topo.New(gns3topo.Options{Client: e.client, Logger: e.ts.log}).Prompt(userCtx(), e.pid)
}

func cmpArgs(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func TestNoIdentity(t *testing.T) {
	e := newEnv(t)
	out, err := e.Rec.Run(context.Background(), e.Tool(ToolGetTemplates), `{}`)
	a := e.Decode(out, err)
	if msg := errText(a.item(t, 0, "failed")); msg != "401: GNS3 did not accept the user's credentials" {
		t.Errorf("no identity: %q", msg)
	}
}
