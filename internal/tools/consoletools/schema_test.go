package consoletools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit/toolkittest"
)

func TestToolMetadata(t *testing.T) {
	t.Parallel()
	ts := New(Options{})
	for _, tools := range [][]string{toolkittest.Names(ts.Project("p")), toolkittest.Names(ts.Gateway())} {
		if strings.Join(tools, ",") != ToolDeviceCommands+","+ToolDeviceConfigCommands+","+ToolVPCSCommands {
			t.Errorf("tools %q", tools)
		}
	}
	side := map[string]bool{ToolDeviceCommands: false, ToolDeviceConfigCommands: true, ToolVPCSCommands: true}
	for _, tl := range append(ts.Project("p"), ts.Gateway()...) {
		if tl.SideEffects != side[tl.Name] {
			t.Errorf("%s: side effects %v", tl.Name, tl.SideEffects)
		}
		if tl.Timeout != 5*time.Minute {
			t.Errorf("%s: timeout %v", tl.Name, tl.Timeout)
		}
		if !strings.Contains(tl.Description, "traceroute, tracepath, tracert, debug, test, ping -f, reload, erase, write erase, format, exit") {
			t.Errorf("%s: description does not list the blocked commands", tl.Name)
		}
	}
}

func TestSchemas(t *testing.T) {
	t.Parallel()
	ts := New(Options{})
	for _, gateway := range []bool{false, true} {
		tools := ts.Project("p")
		if gateway {
			tools = ts.Gateway()
		}
		for _, tl := range tools {
			var s map[string]any
			if err := json.Unmarshal(tl.Parameters, &s); err != nil {
				t.Fatalf("%s: %v", tl.Name, err)
			}
			prop := "commands"
			if tl.Name == ToolDeviceConfigCommands {
				prop = "config_commands"
			}
			props := s["properties"].(map[string]any)
			req := s["required"].([]any)
			if s["type"] != "object" || s["additionalProperties"] != false {
				t.Errorf("%s: root %v", tl.Name, s)
			}
			if gateway {
				pid := props["project_id"].(map[string]any)
				if req[0] != "project_id" || pid["type"] != "string" || pid["pattern"] == nil {
					t.Errorf("%s /v1: project_id %v required %v", tl.Name, pid, req)
				}
				if !strings.HasPrefix(string(tl.Parameters), `{"type":"object","properties":{"project_id"`) {
					t.Errorf("%s /v1: project_id not first: %s", tl.Name, tl.Parameters)
				}
			} else if _, has := props["project_id"]; has || len(req) != 1 {
				t.Errorf("%s: project_id on the project chat", tl.Name)
			}
			dc := props["device_configs"].(map[string]any)
			if dc["type"] != "array" || dc["minItems"] != 1.0 || dc["maxItems"] != 20.0 {
				t.Errorf("%s: device_configs %v", tl.Name, dc)
			}
			item := dc["items"].(map[string]any)
			ip := item["properties"].(map[string]any)
			if item["additionalProperties"] != false || len(item["required"].([]any)) != 2 {
				t.Errorf("%s: item %v", tl.Name, item)
			}
			if n := ip["device_name"].(map[string]any); n["type"] != "string" || n["minLength"] != 0.0 {
				t.Errorf("%s: device_name %v", tl.Name, n)
			}
			c := ip[prop].(map[string]any)
			if c["type"] != "array" || c["minItems"] != 1.0 || c["maxItems"] != 50.0 {
				t.Errorf("%s: %s %v", tl.Name, prop, c)
			}
			if ci := c["items"].(map[string]any); ci["type"] != "string" || ci["minLength"] != 1.0 {
				t.Errorf("%s: %s items %v", tl.Name, prop, ci)
			}
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	c, err := gns3.New("http://127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := New(Options{Client: c})
	show := toolkittest.FindTool(t, ts.Project("p"), ToolDeviceCommands)
	cfg := toolkittest.FindTool(t, ts.Project("p"), ToolDeviceConfigCommands)
	gw := toolkittest.FindTool(t, ts.Gateway(), ToolVPCSCommands)
	many := `{"device_configs":[` + strings.Repeat(`{"device_name":"R1","commands":["show clock"]},`, 20) + `{"device_name":"R1","commands":["x"]}]}`
	cases := []struct {
		tool string
		args string
		want string
	}{
		{ToolDeviceCommands, ``, `device_configs`},
		{ToolDeviceCommands, `[1]`, `must be a JSON object`},
		{ToolDeviceCommands, `{"device_configs":`, `not valid JSON`},
		{ToolDeviceCommands, `{"device_configs":[]}`, `device_configs: minItems`},
		{ToolDeviceCommands, many, `device_configs: maxItems`},
		{ToolDeviceCommands, `{"device_configs":[{"device_name":"R1"}]}`, `device_configs[]: required`},
		{ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":[]}]}`, `device_configs[].commands: minItems`},
		{ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":[""]}]}`, `device_configs[].commands[]: minLength`},
		{ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["a"],"config_commands":["b"]}]}`, `config_commands`},
		{ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["a"]}],"project_id":"x"}`, `project_id`},
		{ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"R1","commands":["a"]}]}`, `unexpected additional properties ["commands"]`},
		{ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"R1"}]}`, `config_commands`},
		{ToolVPCSCommands, `{"project_id":"nope","device_configs":[{"device_name":"PC1","commands":["show ip"]}]}`, `project_id: pattern`},
	}
	for _, tc := range cases {
		tl := show
		switch tc.tool {
		case ToolDeviceConfigCommands:
			tl = cfg
		case ToolVPCSCommands:
			tl = gw
		}
		_, err := tl.Run(context.Background(), json.RawMessage(tc.args))
		if err == nil || !strings.HasPrefix(err.Error(), "invalid arguments: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.tool, tc.args, err, tc.want)
		}
	}
}
