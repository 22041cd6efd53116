package agents

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/tools/seerr"
	"agentchat/internal/tools/seerr/seerrtest"
)

const testKey = "sk-seerr-agents-TEST-9f3c1d"

func TestDefaultRegistryContents(t *testing.T) {
	r := DefaultRegistry(Deps{})
	var ids []string
	for _, a := range r.List() {
		ids = append(ids, a.ID)
		if a.Description == "" || a.SystemPrompt == "" {
			t.Errorf("%s: empty description or system prompt", a.ID)
		}
	}
	if want := []string{GNS3Copilot, MediaAgent, Naked}; !slices.Equal(ids, want) {
		t.Fatalf("ids = %v, want %v", ids, want)
	}
	naked, _ := r.Get(Naked)
	if len(naked.Skills) != 0 || naked.Prepare != nil {
		t.Fatalf("naked has tools: %+v", naked)
	}
}

func TestResolve(t *testing.T) {
	r := DefaultRegistry(Deps{})
	tests := []struct {
		ids  []string
		want string
	}{
		{[]string{"gpt-3.5-turbo"}, Naked},
		{[]string{""}, Naked},
		{nil, Naked},
		{[]string{"", MediaAgent}, MediaAgent},
		{[]string{GNS3Copilot, MediaAgent}, GNS3Copilot},
		{[]string{"unknown", "gpt-4o"}, Naked},
		{[]string{"Media-Agent"}, Naked},
	}
	for _, tt := range tests {
		if got := r.Resolve(tt.ids...); got == nil || got.ID != tt.want {
			t.Errorf("Resolve(%q) = %v, want %s", tt.ids, got, tt.want)
		}
	}
}

func TestMediaAgentTools(t *testing.T) {
	r := DefaultRegistry(Deps{})
	a, ok := r.Get(MediaAgent)
	if !ok {
		t.Fatal("no media-agent")
	}
	tools := agent.Tools(a.Skills)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		var schema map[string]any
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", tool.Name, err)
		}
		props, _ := schema["properties"].(map[string]any)
		if schema["type"] != "object" || len(props) == 0 || schema["additionalProperties"] != false {
			t.Errorf("%s: schema = %s", tool.Name, tool.Parameters)
		}
		if req, ok := schema["required"]; ok {
			list, _ := req.([]any)
			for _, r := range list {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s: required %v is not a property", tool.Name, r)
				}
			}
		}
		if tool.SideEffects != (tool.Name == seerr.ToolRequestMedia) {
			t.Errorf("%s: SideEffects = %v", tool.Name, tool.SideEffects)
		}
		// Without Seerr the tools exist and say so.
		if _, err := tool.Execute(context.Background(), json.RawMessage(`{}`)); !errors.Is(err, seerr.ErrNotConfigured) {
			t.Errorf("%s without Seerr: %v", tool.Name, err)
		}
	}
	want := []string{"search_media", "get_media_details", "request_media", "list_requests", "get_trending"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
}

func TestMediaAgentUsesSeerr(t *testing.T) {
	f := seerrtest.New(testKey)
	defer f.Close()
	c, err := seerr.New(seerr.Config{BaseURL: f.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := DefaultRegistry(Deps{Seerr: c}).Get(MediaAgent)
	if strings.Contains(a.SystemPrompt, testKey) || strings.Contains(a.Skills[0].Prompt, testKey) {
		t.Fatal("API key in a prompt")
	}
	var request agent.Tool
	for _, tool := range agent.Tools(a.Skills) {
		if tool.Name == seerr.ToolRequestMedia {
			request = tool
		}
	}
	out, err := request.Execute(context.Background(), json.RawMessage(`{"media_type":"movie","tmdb_id":438631}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"result":"requested"`) || len(f.Created()) != 1 || f.Created()[0].TMDBID != seerrtest.Dune {
		t.Fatalf("out = %s, created = %+v", out, f.Created())
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"", ModeTeachingAssistant, false},
		{"  ", ModeTeachingAssistant, false},
		{"teaching_assistant", ModeTeachingAssistant, false},
		{"Lab_Automation_Assistant ", ModeLabAutomationAssistant, false},
		{"lab_automation", "", true},
		{"admin", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "teaching_assistant or lab_automation_assistant") {
			t.Errorf("error %q does not list the modes", err)
		}
	}
}

func TestGNS3CopilotWithoutHook(t *testing.T) {
	a, _ := DefaultRegistry(Deps{}).Get(GNS3Copilot)
	if a.Prepare == nil || !strings.Contains(a.SystemPrompt, "never run a destructive") {
		t.Fatalf("copilot = %+v", a)
	}
	for _, mode := range []string{"", ModeTeachingAssistant, ModeLabAutomationAssistant} {
		extra, skills, err := a.Prepare(context.Background(), agent.TurnInfo{ProjectID: "p1", UserID: "u1", Mode: mode})
		if err != nil || len(skills) != 0 {
			t.Fatalf("mode %q: skills %v, err %v", mode, skills, err)
		}
		want, _ := ParseMode(mode)
		if !strings.Contains(extra, "Mode: "+want) || !strings.Contains(extra, "GNS3 tools are not available") {
			t.Fatalf("mode %q: extra = %q", mode, extra)
		}
	}
	if _, _, err := a.Prepare(context.Background(), agent.TurnInfo{Mode: "chaos_monkey"}); err == nil || !strings.Contains(err.Error(), `"chaos_monkey"`) {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestGNS3CopilotModeSelection(t *testing.T) {
	skillFor := func(mode string) agent.Skill {
		tools := []agent.Tool{{Name: "get_topology"}, {Name: "start_node"}}
		if mode == ModeLabAutomationAssistant {
			tools = append(tools, agent.Tool{Name: "stop_node", SideEffects: true}, agent.Tool{Name: "send_config", SideEffects: true})
		}
		return agent.Skill{Name: "gns3-" + mode, Tools: tools}
	}
	var seen []agent.TurnInfo
	hook := func(_ context.Context, t agent.TurnInfo, mode string) (string, []agent.Skill, error) {
		seen = append(seen, t)
		if t.ProjectID == "broken" {
			return "", nil, errors.New("gns3 unreachable")
		}
		return `Project topology: {"nodes":[]}`, []agent.Skill{skillFor(mode)}, nil
	}
	a, _ := DefaultRegistry(Deps{GNS3: hook}).Get(GNS3Copilot)
	tests := []struct {
		mode      string
		wantMode  string
		wantTools []string
	}{
		{"", ModeTeachingAssistant, []string{"get_topology", "start_node"}},
		{ModeTeachingAssistant, ModeTeachingAssistant, []string{"get_topology", "start_node"}},
		{ModeLabAutomationAssistant, ModeLabAutomationAssistant, []string{"get_topology", "start_node", "stop_node", "send_config"}},
	}
	for _, tt := range tests {
		extra, skills, err := a.Prepare(context.Background(), agent.TurnInfo{ProjectID: "p1", UserID: "u1", Mode: tt.mode})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range agent.Tools(skills) {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, tt.wantTools) || len(skills) != 1 || skills[0].Name != "gns3-"+tt.wantMode {
			t.Errorf("mode %q: skills %v tools %v", tt.mode, skills, names)
		}
		if !strings.Contains(extra, "Mode: "+tt.wantMode) || !strings.Contains(extra, "Project topology") || strings.Contains(extra, "not available") {
			t.Errorf("mode %q: extra = %q", tt.mode, extra)
		}
	}
	if len(seen) != 3 || seen[0].ProjectID != "p1" || seen[0].UserID != "u1" {
		t.Fatalf("hook saw %+v", seen)
	}
	if _, _, err := a.Prepare(context.Background(), agent.TurnInfo{ProjectID: "x", Mode: "bogus"}); err == nil || len(seen) != 3 {
		t.Fatalf("unknown mode reached the hook or passed: %v", err)
	}
	_, _, err := a.Prepare(context.Background(), agent.TurnInfo{ProjectID: "broken"})
	if err == nil || !strings.Contains(err.Error(), "gns3 unreachable") || !strings.Contains(err.Error(), "project broken") {
		t.Fatalf("hook error: %v", err)
	}
}

func TestGNS3CopilotHookWithoutTools(t *testing.T) {
	hook := func(context.Context, agent.TurnInfo, string) (string, []agent.Skill, error) {
		return "## GNS3 project topology\n{}", nil, nil
	}
	a, _ := DefaultRegistry(Deps{GNS3: hook}).Get(GNS3Copilot)
	extra, skills, err := a.Prepare(context.Background(), agent.TurnInfo{ProjectID: "p1", Mode: ModeLabAutomationAssistant})
	if err != nil || len(skills) != 0 {
		t.Fatalf("skills %v, err %v", skills, err)
	}
	notools := strings.Index(extra, "You have no GNS3 tools in this turn")
	topo := strings.Index(extra, "## GNS3 project topology")
	if !strings.HasPrefix(extra, "Mode: "+ModeLabAutomationAssistant) || notools < 0 || topo < notools || strings.Contains(extra, "not available on this server") {
		t.Fatalf("extra = %q", extra)
	}
}
