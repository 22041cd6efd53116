package agents

import (
	"strings"
	"testing"

	"agentchat/internal/tools/gns3tools"
)

// TestLinkToolsModes: reading a link's traffic is allowed in every mode;
// changing its conditions in lab automation and injection only, and its
// refusal in teaching mode names the mode that allows it.
func TestLinkToolsModes(t *testing.T) {
	for _, tc := range []struct {
		tool                          string
		teaching, automate, injection bool
	}{
		{gns3tools.ToolAnalyzeTraffic, true, true, true},
		{gns3tools.ToolLinkConditions, false, true, true},
	} {
		if ToolAllowed(ModeTeachingAssistant, tc.tool) != tc.teaching || ToolAllowed(ModeLabAutomationAssistant, tc.tool) != tc.automate ||
			ToolAllowed(ModeTroubleshootingInjection, tc.tool) != tc.injection {
			t.Errorf("%s: allowed %v/%v/%v", tc.tool, ToolAllowed(ModeTeachingAssistant, tc.tool),
				ToolAllowed(ModeLabAutomationAssistant, tc.tool), ToolAllowed(ModeTroubleshootingInjection, tc.tool))
		}
	}
	if got := refusal(ModeTeachingAssistant, gns3tools.ToolLinkConditions); !strings.Contains(got, "needs the lab_automation_assistant mode") {
		t.Errorf("refusal %q", got)
	}
}
