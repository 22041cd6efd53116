package agents

import (
	"context"
	"slices"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/tools/knowledge"
)

// device_skills and wait_seconds are offered in teaching and lab
// automation modes (DESIGN.md's table); injection_scenarios in neither.
func TestKnowledgeToolsByMode(t *testing.T) {
	know, err := knowledge.New(knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := DefaultRegistry(Deps{GNS3Tools: CombineLabTools(&fakeLab{}, know)}).Get(GNS3Copilot)
	for _, tc := range []struct {
		mode    string
		offered []string
		refused []string
	}{
		{ModeTeachingAssistant, []string{knowledge.ToolDeviceSkills, knowledge.ToolWaitSeconds}, []string{knowledge.ToolInjectionScenarios}},
		{ModeLabAutomationAssistant, []string{knowledge.ToolDeviceSkills, knowledge.ToolWaitSeconds}, []string{knowledge.ToolInjectionScenarios}},
	} {
		for _, project := range []string{"p1", ""} {
			p, err := a.Prepared(context.Background(), agent.TurnInfo{ProjectID: project, UserID: "u1", Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			got := toolNamesOf(p)
			for _, name := range tc.offered {
				if !slices.Contains(got, name) {
					t.Errorf("%s (project %q): %s not offered: %v", tc.mode, project, name, got)
				}
			}
			for _, name := range tc.refused {
				if slices.Contains(got, name) || ToolAllowed(tc.mode, name) {
					t.Errorf("%s: %s offered or allowed", tc.mode, name)
				}
			}
		}
	}
}
