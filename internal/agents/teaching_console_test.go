package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/console/consoletest"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// TestTeachingModeSendsNoChangeToDevices drives the copilot's tools the
// way the runtime does in teaching mode, against fake consoles: whatever
// the model asks, the only console tool offered is the read-only one, and
// the devices receive show and ping commands only.
func TestTeachingModeSendsNoChangeToDevices(t *testing.T) {
	const token = "eyJhbGciOiJIUzI1NiJ9.agents-teaching.sig"
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(token))
	pid := fake.AddProject("lab", "opened")
	r1 := consoletest.NewIOS(t, consoletest.IOSOptions{Hostname: "R1"})
	n := gns3test.QemuRouterNode(pid, "R1", 0, 0)
	n["console"], n["console_host"], n["status"] = r1.Port(), "127.0.0.1", "started"
	n["tags"] = []any{"device_type:cisco_ios_telnet"}
	fake.AddNode(pid, n)
	pc := consoletest.NewVPCS(t, "PC1")
	fake.AddNode(pid, gns3test.VPCSNode(pid, "PC1", "started", pc.Port(), 150, 0))
	c, err := gns3.New(fake.URL, nil, gns3.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	consoles := consoletools.New(consoletools.Options{Client: c, ConsoleHost: "127.0.0.1", CommandTimeout: 3 * time.Second})
	a, _ := DefaultRegistry(Deps{GNS3Tools: consoles}).Get(GNS3Copilot)
	p, err := a.Prepared(context.Background(), agent.TurnInfo{ProjectID: pid, UserID: "user-1", Mode: ModeTeachingAssistant})
	if err != nil {
		t.Fatal(err)
	}
	var show *agent.Tool
	for _, tl := range agent.Tools(p.Skills) {
		switch tl.Name {
		case consoletools.ToolDeviceCommands:
			show = &tl
		case consoletools.ToolDeviceConfigCommands, consoletools.ToolVPCSCommands:
			t.Errorf("teaching mode offers %s", tl.Name)
		}
	}
	if show == nil {
		t.Fatal("teaching mode offers no show tool")
	}
	for _, tool := range []string{consoletools.ToolDeviceConfigCommands, consoletools.ToolVPCSCommands} {
		if !strings.Contains(p.Refuse(tool), "not allowed in teaching_assistant mode") {
			t.Errorf("Refuse(%s) = %q", tool, p.Refuse(tool))
		}
	}
	attacks := []string{"reload", "rel", "wr er", "write erase", "write memory", "conf t", "do rel", "copy run start",
		"clear counters", "show clock\nreload", "reload\x15", "ip 10.9.9.9/24", "save", "t 10.0.0.1", "show run | redirect flash:x"}
	args, _ := json.Marshal(map[string]any{"device_configs": []map[string]any{
		{"device_name": "R1", "commands": append([]string{"show ip interface brief", "ping 10.0.0.2"}, attacks...)},
		{"device_name": "PC1", "commands": append([]string{"show ip", "ping 10.0.0.1"}, attacks...)},
	}})
	out, err := show.Run(toolkittest.UserContext(token), args)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Results []struct {
			Status          string   `json:"status"`
			Error           string   `json:"error"`
			BlockedCommands []string `json:"blocked_commands"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil || len(answer.Results) != 2 {
		t.Fatalf("answer %s: %v", out, err)
	}
	for i, r := range answer.Results {
		want := len(attacks)
		if i == 1 {
			want-- // "show run | redirect flash:x" is a show command for VPCS, which has no output modifiers
		}
		if r.Status != "partial_success" || len(r.BlockedCommands) != want || !strings.Contains(r.Error, "sends only read-only commands; use") {
			t.Errorf("device %d: %s, blocked %q, error %q", i, r.Status, r.BlockedCommands, r.Error)
		}
	}
	for _, l := range r1.Lines() {
		switch strings.TrimSpace(l) {
		case "", "enable", "terminal length 0", "terminal width 512", "show ip interface brief", "ping 10.0.0.2":
		default:
			t.Errorf("R1 received %q in teaching mode", l)
		}
	}
	for _, l := range pc.Lines() {
		if w := strings.Fields(l); len(w) > 0 && w[0] != "show" && w[0] != "ping" {
			t.Errorf("PC1 received %q in teaching mode", l)
		}
	}
}
