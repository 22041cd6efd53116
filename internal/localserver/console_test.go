package localserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentchat/internal/console/consoletest"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm/llmtest"
)

// addRouter puts a started IOS router in the lab whose console is the fake
// device.
func (l *copilotLab) addRouter(name string, dev *consoletest.IOS) string {
	n := gns3test.QemuRouterNode(l.project, name, 0, 0)
	n["status"] = "started"
	n["console"] = dev.Port()
	n["console_host"] = "127.0.0.1"
	n["tags"] = []any{"device_type:cisco_ios_telnet"}
	return l.gns3.AddNode(l.project, n)
}

// deviceResults decodes a console tool's results by device.
func deviceResults(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	r := parseResult(t, out)
	byName := map[string]map[string]any{}
	for _, it := range r.Results {
		byName[it["device_name"].(string)] = it
	}
	return byName
}

func TestCopilotRunsCommandsOnConsoles(t *testing.T) {
	l := newCopilotLab(t, false)
	r1 := consoletest.NewIOS(t, consoletest.IOSOptions{Hostname: "R1", ANSI: true, PageLines: 4})
	r2 := consoletest.NewIOS(t, consoletest.IOSOptions{Hostname: "R2"})
	l.addRouter("R1", r1)
	l.addRouter("R2", r2)

	// Show commands on two routers in one call; a blocked command is
	// reported and never typed.
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_show", Name: "execute_multiple_device_commands",
		Arguments: `{"device_configs":[{"device_name":"R1","commands":["show ip interface brief","reload"]},{"device_name":"R2","commands":["show ip interface brief"]}]}`}}},
		llmtest.Reply{Text: "Both routers answered."})
	evs := l.stream(map[string]any{"message": "show ip interface brief on R1 and R2"}, nil)
	out := toolEnd(t, evs, "call_show").ToolOutput
	res := deviceResults(t, out)
	for _, name := range []string{"R1", "R2"} {
		o, _ := res[name]["output"].(string)
		if !strings.Contains(o, "GigabitEthernet0/0") || strings.Contains(o, "--More--") || strings.Contains(o, "\x1b") {
			t.Fatalf("%s output: %q", name, o)
		}
	}
	if b, _ := json.Marshal(res["R1"]["blocked_commands"]); !strings.Contains(string(b), "reload") || res["R1"]["status"] != "partial_success" {
		t.Fatalf("R1 result: %v", res["R1"])
	}
	if r1.Received("reload") {
		t.Fatal("a blocked command reached R1")
	}

	// Teaching mode refuses the configuration tool; automation mode applies
	// it in order and leaves R1 at its enable prompt.
	config := `{"device_configs":[{"device_name":"R1","config_commands":["interface GigabitEthernet0/1","ip address 10.0.12.1 255.255.255.0","no shutdown"]}]}`
	for _, tc := range []struct{ mode, want string }{
		{"teaching_assistant", "not allowed in teaching_assistant mode"},
		{"lab_automation_assistant", `"status":"success"`},
	} {
		l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_cfg", Name: "execute_multiple_device_config_commands", Arguments: config}}},
			llmtest.Reply{Text: "Done."})
		evs := l.stream(map[string]any{"message": "configure Gi0/1 on R1", "copilot_mode": tc.mode}, nil)
		if out := toolEnd(t, evs, "call_cfg").ToolOutput; !strings.Contains(out, tc.want) {
			t.Fatalf("%s: %s", tc.mode, out)
		}
		if ip, _, up := r1.Interface("GigabitEthernet0/1"); (tc.mode == "teaching_assistant") != (ip == "") || (ip != "" && !up) {
			t.Fatalf("%s: Gi0/1 = %q up %v", tc.mode, ip, up)
		}
	}
	if got := r1.ConfigLines(); strings.Join(got, "|") != "interface GigabitEthernet0/1|ip address 10.0.12.1 255.255.255.0|no shutdown" {
		t.Fatalf("config lines = %q", got)
	}
	if p := r1.Prompt(); p != "R1#" {
		t.Fatalf("R1 left at %q", p)
	}
	if !r1.WaitClosed(5 * time.Second) {
		t.Fatal("the console session was left open")
	}
	l.checkNoToken(evs)
}
