package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/seerr"
	"agentchat/internal/seerr/seerrtest"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/gns3tools"
	"agentchat/internal/tools/seerrtools"
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
		if tool.SideEffects != (tool.Name == seerrtools.ToolRequestMedia) {
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
		if tool.Name == seerrtools.ToolRequestMedia {
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

// fakeLab offers one tool per name of the mode table, in both variants.
type fakeLab struct{ projects []string }

func (f *fakeLab) tools(prefix string) []agent.Tool {
	names := []string{
		gns3tools.ToolTopologyReader, gns3tools.ToolGetTemplates, gns3tools.ToolCreateNode, gns3tools.ToolCreateLink,
		gns3tools.ToolStartNode, gns3tools.ToolStopNode, gns3tools.ToolSuspendNode, gns3tools.ToolUpdateNodeName,
		gns3tools.ToolDeleteNode, gns3tools.ToolDeleteLink,
	}
	var out []agent.Tool
	for _, n := range names {
		out = append(out, agent.Tool{Name: n, Description: prefix})
	}
	return out
}

func (f *fakeLab) Project(projectID string) []agent.Tool {
	f.projects = append(f.projects, projectID)
	return f.tools("project " + projectID)
}

func (f *fakeLab) Gateway() []agent.Tool {
	return append(f.tools("gateway"), agent.Tool{Name: gns3tools.ToolListProjects, Description: "gateway"})
}

func toolNamesOf(p agent.Preparation) []string {
	var names []string
	for _, tool := range agent.Tools(p.Skills) {
		names = append(names, tool.Name)
	}
	return names
}

func TestGNS3CopilotWithoutTools(t *testing.T) {
	a, _ := DefaultRegistry(Deps{}).Get(GNS3Copilot)
	if a.Begin == nil || !strings.Contains(a.SystemPrompt, "never run a destructive") || !slices.Equal(a.Modes, AllModes()) {
		t.Fatalf("copilot = %+v", a)
	}
	for _, mode := range []string{"", ModeTeachingAssistant, ModeLabAutomationAssistant} {
		p, err := a.Prepared(context.Background(), agent.TurnInfo{ProjectID: "p1", UserID: "u1", Mode: mode})
		if err != nil || len(p.Skills) != 0 || p.Refresh != nil {
			t.Fatalf("mode %q: %+v, err %v", mode, p, err)
		}
		want, _ := ParseMode(mode)
		if !strings.HasPrefix(p.Prompt, "Mode: "+want) || !strings.Contains(p.Prompt, "GNS3 tools are not available") {
			t.Fatalf("mode %q: prompt = %q", mode, p.Prompt)
		}
	}
	if _, err := a.Prepared(context.Background(), agent.TurnInfo{Mode: "chaos_monkey"}); err == nil || !strings.Contains(err.Error(), `"chaos_monkey"`) {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestGNS3CopilotModes(t *testing.T) {
	lab := &fakeLab{}
	var fetched []string
	topology := func(_ context.Context, projectID string) string {
		fetched = append(fetched, projectID)
		return fmt.Sprintf("## GNS3 project topology\n{\"fetch\":%d}", len(fetched))
	}
	a, _ := DefaultRegistry(Deps{GNS3Topology: topology, GNS3Tools: lab}).Get(GNS3Copilot)
	both := []string{gns3tools.ToolTopologyReader, gns3tools.ToolGetTemplates, gns3tools.ToolCreateNode, gns3tools.ToolCreateLink, gns3tools.ToolStartNode, gns3tools.ToolUpdateNodeName}
	automation := []string{gns3tools.ToolTopologyReader, gns3tools.ToolGetTemplates, gns3tools.ToolCreateNode, gns3tools.ToolCreateLink,
		gns3tools.ToolStartNode, gns3tools.ToolStopNode, gns3tools.ToolSuspendNode, gns3tools.ToolUpdateNodeName, gns3tools.ToolDeleteNode, gns3tools.ToolDeleteLink}
	tests := []struct {
		name, project, mode string
		wantTools           []string
		wantPrompt          string
		refused             map[string]string // tool → part of the refusal
	}{
		{"teaching project", "p1", ModeTeachingAssistant, both, "Mode: teaching_assistant",
			map[string]string{gns3tools.ToolStopNode: "needs the lab_automation_assistant mode", consoletools.ToolDeviceConfigCommands: "not allowed in teaching_assistant mode", "format_disk": `tool "format_disk" is not allowed in teaching_assistant mode`}},
		{"default is teaching", "p1", "", both, "Mode: teaching_assistant", nil},
		{"automation project", "p1", ModeLabAutomationAssistant, automation, "Mode: lab_automation_assistant",
			map[string]string{"reload_everything": `tool "reload_everything" is not allowed in lab_automation_assistant mode`}},
		{"teaching gateway", "", ModeTeachingAssistant, append(slices.Clone(both), gns3tools.ToolListProjects), "list_gns3_projects", nil},
		{"automation gateway", "", ModeLabAutomationAssistant, append(slices.Clone(automation), gns3tools.ToolListProjects), "pass the project_id", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fetched = nil
			p, err := a.Prepared(context.Background(), agent.TurnInfo{ProjectID: tc.project, UserID: "u1", Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNamesOf(p); !slices.Equal(got, tc.wantTools) {
				t.Fatalf("tools = %v, want %v", got, tc.wantTools)
			}
			if !strings.Contains(p.Prompt, tc.wantPrompt) {
				t.Fatalf("prompt = %q", p.Prompt)
			}
			for tool, want := range tc.refused {
				if got := p.Refuse(tool); !strings.Contains(got, want) || !strings.HasPrefix(got, "Error: ") {
					t.Errorf("Refuse(%s) = %q, want %q", tool, got, want)
				}
			}
			if tc.project == "" {
				if len(fetched) != 0 || p.Refresh != nil || strings.Contains(p.Prompt, "## GNS3 project topology") {
					t.Fatalf("gateway turn fetched a topology: %v, prompt %q", fetched, p.Prompt)
				}
				return
			}
			if !slices.Equal(fetched, []string{tc.project}) || !strings.HasSuffix(p.Prompt, `{"fetch":1}`) {
				t.Fatalf("fetched %v, prompt %q", fetched, p.Prompt)
			}
			again, err := p.Refresh(context.Background())
			if err != nil || !strings.HasSuffix(again, `{"fetch":2}`) || !strings.HasPrefix(again, "Mode: ") {
				t.Fatalf("refresh = %q, %v", again, err)
			}
		})
	}
	if !slices.Contains(lab.projects, "p1") {
		t.Fatalf("project tools asked for %v", lab.projects)
	}
}

func TestToolAllowedTable(t *testing.T) {
	tests := []struct {
		tool               string
		teaching, automate bool
	}{
		{gns3tools.ToolTopologyReader, true, true},
		{gns3tools.ToolGetTemplates, true, true},
		{gns3tools.ToolCreateNode, true, true},
		{gns3tools.ToolCreateLink, true, true},
		{gns3tools.ToolStartNode, true, true},
		{gns3tools.ToolUpdateNodeName, true, true},
		{gns3tools.ToolListProjects, true, true},
		{consoletools.ToolDeviceCommands, true, true},
		{gns3tools.ToolStopNode, false, true},
		{gns3tools.ToolSuspendNode, false, true},
		{gns3tools.ToolDeleteNode, false, true},
		{gns3tools.ToolDeleteLink, false, true},
		{consoletools.ToolDeviceConfigCommands, false, true},
		{consoletools.ToolVPCSCommands, false, true},
		{"invented_tool", false, false},
	}
	for _, tc := range tests {
		if got := ToolAllowed(ModeTeachingAssistant, tc.tool); got != tc.teaching {
			t.Errorf("teaching %s = %v", tc.tool, got)
		}
		if got := ToolAllowed(ModeLabAutomationAssistant, tc.tool); got != tc.automate {
			t.Errorf("automation %s = %v", tc.tool, got)
		}
		if ToolAllowed("", tc.tool) || ToolAllowed("root", tc.tool) {
			t.Errorf("%s allowed in no mode", tc.tool)
		}
	}
}

// TestGNS3CopilotReadsTheTopologyAtBegin: the project's topology is read
// as the turn starts (Begin), with Begin's context (the caller's token),
// before the mode is known; the Preparer waits for it. A gateway turn
// reads none.
func TestGNS3CopilotReadsTheTopologyAtBegin(t *testing.T) {
	type key struct{}
	reading := make(chan string, 2)
	topology := func(ctx context.Context, projectID string) string {
		reading <- fmt.Sprint(projectID, " ", ctx.Value(key{}))
		return "## GNS3 project topology\n{}"
	}
	a, _ := DefaultRegistry(Deps{GNS3Topology: topology, GNS3Tools: &fakeLab{}}).Get(GNS3Copilot)
	ctx := context.WithValue(context.Background(), key{}, "alice's token")
	prep := a.Begin(ctx, agent.TurnInfo{ProjectID: "p1", UserID: "u1"})
	select {
	case got := <-reading:
		if got != "p1 alice's token" {
			t.Fatalf("read %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Begin did not start reading the topology")
	}
	p, err := prep(context.Background(), ModeLabAutomationAssistant)
	if err != nil || !strings.HasSuffix(p.Prompt, "## GNS3 project topology\n{}") || !strings.HasPrefix(p.Prompt, "Mode: lab_automation_assistant") {
		t.Fatalf("prompt %q, %v", p.Prompt, err)
	}

	gw := a.Begin(ctx, agent.TurnInfo{UserID: "u1"})
	if _, err := gw(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if len(reading) != 0 {
		t.Fatalf("a gateway turn read a topology: %q", <-reading)
	}
}
