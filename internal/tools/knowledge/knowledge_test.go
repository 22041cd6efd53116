package knowledge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/manualclock"
	"agentchat/internal/skills"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// answer is the envelope of every tool answer.
type answer struct {
	Success bool             `json:"success"`
	Total   int              `json:"total"`
	Failed  int              `json:"failed"`
	Results []map[string]any `json:"results"`
}

func run(t *testing.T, tools []agent.Tool, name, args string) answer {
	t.Helper()
	out, err := toolkittest.FindTool(t, tools, name).Execute(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	var a answer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%s %s: answer %q: %v", name, args, out, err)
	}
	return a
}

func newToolset(t *testing.T, o Options) *Toolset {
	t.Helper()
	ts, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The tools take no project_id, on the project chat and on the gateway.
func TestToolsAddressNoProject(t *testing.T) {
	ts := newToolset(t, Options{})
	for _, tools := range [][]agent.Tool{ts.Project("p1"), ts.Gateway()} {
		if got := toolkittest.Names(tools); !slices.Equal(got, []string{ToolDeviceSkills, ToolInjectionScenarios, ToolWaitSeconds}) {
			t.Fatalf("tools %v", got)
		}
		for _, tl := range tools {
			if strings.Contains(string(tl.Parameters), "project_id") || tl.SideEffects {
				t.Errorf("%s: takes a project_id or claims side effects: %s", tl.Name, tl.Parameters)
			}
		}
	}
}

func TestDeviceSkills(t *testing.T) {
	tools := newToolset(t, Options{}).Project("p1")
	for _, tc := range []struct {
		name, args string
		total      int
		failed     bool
		check      func(t *testing.T, r []map[string]any)
	}{
		{"list platforms", `{"action":"list"}`, 4, false, func(t *testing.T, r []map[string]any) {
			if r[0]["platform"] != "cisco_ios_telnet" || r[0]["display_commands"] != nil {
				t.Errorf("list should be a summary, sorted: %v", r[0])
			}
		}},
		{"list topics", `{"action":"list","platform":"IOL"}`, 7, false, func(t *testing.T, r []map[string]any) {
			if r[0]["topic"] != "acl" || r[0]["platform"] != "cisco_ios_telnet" {
				t.Errorf("topics of ios: %v", r[0])
			}
		}},
		{"get base", `{"action":"get","platform":"vpcs"}`, 1, false, func(t *testing.T, r []map[string]any) {
			if r[0]["prompts"] == nil || r[0]["avoid"] == nil || r[0]["config_commands"] == nil {
				t.Errorf("vpcs base: %v", r[0])
			}
		}},
		{"get topic", `{"action":"get","platform":"ios","topic":"OSPF"}`, 1, false, func(t *testing.T, r []map[string]any) {
			if r[0]["topic"] != "ospf" || !strings.Contains(toJSON(r[0]["display_commands"]), "show ip ospf neighbor") {
				t.Errorf("ospf topic: %v", r[0])
			}
		}},
		{"unknown platform", `{"action":"get","platform":"junos"}`, 1, true, func(t *testing.T, r []map[string]any) {
			if !strings.Contains(r[0]["error"].(string), "known platforms: cisco_ios_telnet") {
				t.Errorf("error: %v", r[0]["error"])
			}
		}},
		{"unknown topic", `{"action":"get","platform":"vpcs","topic":"ospf"}`, 1, true, nil},
		{"get without platform", `{"action":"get"}`, 1, true, nil},
		{"path as platform", `{"action":"get","platform":"../../etc/passwd"}`, 1, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := run(t, tools, ToolDeviceSkills, tc.args)
			if a.Total != tc.total || (a.Failed > 0) != tc.failed {
				t.Fatalf("total %d failed %d: %+v", a.Total, a.Failed, a)
			}
			if tc.check != nil {
				tc.check(t, a.Results)
			}
		})
	}
	for _, bad := range []string{`{}`, `{"action":"delete"}`, `{"action":"get","platform":""}`, `{"action":"get","platform":"` + strings.Repeat("x", 65) + `"}`} {
		if _, err := toolkittest.FindTool(t, tools, ToolDeviceSkills).Execute(context.Background(), json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestInjectionScenarios(t *testing.T) {
	tools := newToolset(t, Options{}).Project("p1")
	a := run(t, tools, ToolInjectionScenarios, `{"action":"list"}`)
	if a.Total < 12 || !a.Success {
		t.Fatalf("list: %+v", a)
	}
	if a.Results[0]["inject"] != nil || a.Results[0]["name"] == nil || a.Results[0]["title"] == nil {
		t.Errorf("list should be a summary: %v", a.Results[0])
	}
	a = run(t, tools, ToolInjectionScenarios, `{"action":"get","name":"OSPF_hello_mismatch"}`)
	if !a.Success || a.Results[0]["name"] != "ospf_hello_mismatch" || a.Results[0]["undo"] == nil || a.Results[0]["verify"] == nil {
		t.Errorf("get: %+v", a)
	}
	for _, args := range []string{`{"action":"get"}`, `{"action":"get","name":"nope"}`} {
		if a := run(t, tools, ToolInjectionScenarios, args); a.Success || a.Failed != 1 {
			t.Errorf("%s: %+v", args, a)
		}
	}
}

// A SKILLS_DIR file in the layout of the GNS3 skills repository is served
// by device_skills, and a reload is seen by the next call.
func TestSkillsDirServed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "device", "junos"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := "name: Junos\ndescription: Juniper Junos\ndevice_type: juniper_junos\ncategory: device\n" +
		"display_commands:\n  routes:\n    syntax: show route\n    description: the routing table\nnotes:\n  - commit to apply\n"
	if err := os.WriteFile(filepath.Join(dir, "device", "junos", "_base.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := skills.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tools := newToolset(t, Options{Skills: reg}).Project("p1")
	a := run(t, tools, ToolDeviceSkills, `{"action":"get","platform":"juniper_junos"}`)
	if !a.Success || !strings.Contains(toJSON(a.Results[0]), `"show route"`) || a.Results[0]["source"] != "skills_dir:device/junos/_base.yaml" {
		t.Fatalf("junos: %+v", a)
	}
	topic := "device_type: juniper_junos\ntopic: ospf\nname: OSPF\ndisplay_commands:\n  nbr:\n    syntax: show ospf neighbor\n"
	if err := os.WriteFile(filepath.Join(dir, "device", "junos", "ospf.yaml"), []byte(topic), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Reload(); err != nil {
		t.Fatal(err)
	}
	if a := run(t, tools, ToolDeviceSkills, `{"action":"get","platform":"juniper_junos","topic":"ospf"}`); !a.Success {
		t.Fatalf("topic after reload: %+v", a)
	}
}

// wait_seconds waits the time asked (a test sleep records it, the manual
// clock tells what was waited), is bounded to 1..600 by its schema, and
// its own timeout covers the longest wait.
func TestWaitSeconds(t *testing.T) {
	clock := manualclock.New(time.Unix(1_700_000_000, 0))
	var asked []time.Duration
	ts := newToolset(t, Options{Now: clock.Now, Sleep: func(_ context.Context, d time.Duration) error {
		asked = append(asked, d)
		clock.Add(d)
		return nil
	}})
	tl := toolkittest.FindTool(t, ts.Project("p1"), ToolWaitSeconds)
	if tl.Timeout <= maxWait*time.Second {
		t.Errorf("timeout %v does not cover a %ds wait", tl.Timeout, maxWait)
	}
	a := run(t, ts.Project("p1"), ToolWaitSeconds, `{"seconds":45}`)
	if !a.Success || a.Results[0]["waited_seconds"] != float64(45) || !slices.Equal(asked, []time.Duration{45 * time.Second}) {
		t.Fatalf("wait 45: %+v, slept %v", a, asked)
	}
	for _, bad := range []string{`{}`, `{"seconds":0}`, `{"seconds":601}`, `{"seconds":-5}`, `{"seconds":1.5}`, `{"seconds":"10"}`} {
		if _, err := tl.Execute(context.Background(), json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if len(asked) != 1 {
		t.Errorf("a refused call slept: %v", asked)
	}
}

// An abort (the turn's context ending) ends a wait at once: the real
// sleep returns as soon as the context is cancelled, and the answer says
// the wait was interrupted.
func TestWaitSecondsAbort(t *testing.T) {
	ts := newToolset(t, Options{})
	tl := toolkittest.FindTool(t, ts.Project("p1"), ToolWaitSeconds)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		out, _ := tl.Execute(ctx, json.RawMessage(`{"seconds":600}`))
		done <- out
	}()
	cancel()
	out := <-done
	if !strings.Contains(out, `"status":"failed"`) || !strings.Contains(out, "interrupted") {
		t.Fatalf("aborted wait: %s", out)
	}
}
