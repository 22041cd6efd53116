package agents

import (
	"context"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/gns3tools"
	"agentchat/internal/tools/knowledge"
)

// troubleshooting_injection offers the topology reader, show and
// configuration commands, link conditions, the scenarios and the device
// knowledge, and nothing that creates, stops or deletes; a request cannot
// pick it (only /inject does), and teaching mode stays read-only.
func TestInjectionMode(t *testing.T) {
	know, err := knowledge.New(knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := DefaultRegistry(Deps{GNS3Tools: CombineLabTools(&fakeLab{}, know)}).Get(GNS3Copilot)
	if !a.HasMode(ModeTroubleshootingInjection) || a.DefaultMode() != ModeTeachingAssistant {
		t.Fatalf("modes %v", a.Modes)
	}
	p, err := a.Prepared(context.Background(), agent.TurnInfo{ProjectID: "p1", UserID: "u1", Mode: ModeTroubleshootingInjection})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Prompt, "Mode: troubleshooting_injection") || !strings.Contains(p.Prompt, "how to undo") && !strings.Contains(p.Prompt, "undo it") {
		t.Fatalf("prompt %q", p.Prompt)
	}
	got := toolNamesOf(p)
	for _, want := range []string{gns3tools.ToolTopologyReader, knowledge.ToolDeviceSkills, knowledge.ToolInjectionScenarios} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not offered: %v", want, got)
		}
	}
	for _, no := range []string{gns3tools.ToolCreateNode, gns3tools.ToolDeleteNode, gns3tools.ToolStopNode, gns3tools.ToolDeleteLink, gns3tools.ToolCreateLink, knowledge.ToolWaitSeconds} {
		if slices.Contains(got, no) {
			t.Errorf("%s offered in injection mode", no)
		}
	}
	for _, tc := range []struct {
		tool                         string
		teaching, automate, injected bool
	}{
		{consoletools.ToolDeviceCommands, true, true, true},
		{consoletools.ToolDeviceConfigCommands, false, true, true},
		{consoletools.ToolVPCSCommands, false, true, true},
		{toolLinkConditions, false, false, true},
		{knowledge.ToolInjectionScenarios, false, false, true},
		{knowledge.ToolDeviceSkills, true, true, true},
		{gns3tools.ToolStartNode, true, true, false},
	} {
		if ToolAllowed(ModeTeachingAssistant, tc.tool) != tc.teaching || ToolAllowed(ModeTroubleshootingInjection, tc.tool) != tc.injected {
			t.Errorf("%s: teaching %v injection %v", tc.tool, ToolAllowed(ModeTeachingAssistant, tc.tool), ToolAllowed(ModeTroubleshootingInjection, tc.tool))
		}
		if tc.tool == toolLinkConditions {
			continue // lab automation gets it from the link tools' own change
		}
		if ToolAllowed(ModeLabAutomationAssistant, tc.tool) != tc.automate {
			t.Errorf("%s: automation %v", tc.tool, ToolAllowed(ModeLabAutomationAssistant, tc.tool))
		}
	}
	if _, err := ParseMode(ModeTroubleshootingInjection); err == nil {
		t.Error("a request may pick troubleshooting_injection")
	}
}
