package approval_test

import (
	"slices"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/approval"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/gns3tools"
	"agentchat/internal/tools/knowledge"
)

// labChanging are the tools the issue names as changing the lab or a
// device: nodes (create, delete, start, stop, suspend, rename), links,
// link conditions, configuration and VPCS commands.
var labChanging = []string{
	gns3tools.ToolCreateNode, gns3tools.ToolDeleteNode, gns3tools.ToolStartNode, gns3tools.ToolStopNode,
	gns3tools.ToolSuspendNode, gns3tools.ToolUpdateNodeName, gns3tools.ToolCreateLink, gns3tools.ToolDeleteLink,
	gns3tools.ToolLinkConditions, consoletools.ToolDeviceConfigCommands, consoletools.ToolVPCSCommands,
}

// realTools are every lab tool the servers build, in their project-chat
// and /v1 forms.
func realTools(t *testing.T) []agent.Tool {
	t.Helper()
	g := gns3tools.New(gns3tools.Options{})
	c := consoletools.New(consoletools.Options{})
	k, err := knowledge.New(knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.Tool
	for _, set := range [][]agent.Tool{g.Project("p"), g.Gateway(), c.Project("p"), c.Gateway(), k.Project("p"), k.Gateway()} {
		out = append(out, set...)
	}
	return out
}

// TestEveryToolIsClassified fails when a tool is added without a tier, or
// with a tier that disagrees with its SideEffects, or when the changing
// tools are not exactly those of the issue (Changes would then pause too
// much or, worse, too little).
func TestEveryToolIsClassified(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range realTools(t) {
		switch tool.Tier {
		case agent.TierRead, agent.TierBuild, agent.TierDestructive, agent.TierConfigure:
		default:
			t.Errorf("tool %s has no tier (%q)", tool.Name, tool.Tier)
			continue
		}
		if tool.Tier.ChangesLab() != tool.SideEffects {
			t.Errorf("tool %s: tier %s but SideEffects %v", tool.Name, tool.Tier, tool.SideEffects)
		}
		want := slices.Contains(labChanging, tool.Name)
		if tool.Tier.ChangesLab() != want {
			t.Errorf("tool %s: changes the lab = %v, want %v", tool.Name, tool.Tier.ChangesLab(), want)
		}
		if got := approval.Changes.Needs(tool.Tier.ChangesLab()); got != want {
			t.Errorf("tool %s: needs approval under changes = %v, want %v", tool.Name, got, want)
		}
		seen[tool.Name] = true
	}
	for _, name := range labChanging {
		if !seen[name] {
			t.Errorf("lab-changing tool %s is not built by any toolset", name)
		}
	}
}

// TestSummariesKnowEveryChangingTool checks that each lab-changing tool
// gets its own summary (not the fallback of its name and raw arguments).
func TestSummariesKnowEveryChangingTool(t *testing.T) {
	args := map[string]string{
		gns3tools.ToolCreateNode:              `{"nodes":[{"template":"c7200"}]}`,
		gns3tools.ToolDeleteNode:              `{"nodes":["R1"]}`,
		gns3tools.ToolStartNode:               `{"nodes":["R1"]}`,
		gns3tools.ToolStopNode:                `{"nodes":["R1"]}`,
		gns3tools.ToolSuspendNode:             `{"nodes":["R1"]}`,
		gns3tools.ToolUpdateNodeName:          `{"nodes":[{"node":"R1","new_name":"R9"}]}`,
		gns3tools.ToolCreateLink:              `{"links":[{"node_a":"R1","port_a":"e0/0","node_b":"R2","port_b":"e0/0"}]}`,
		gns3tools.ToolDeleteLink:              `{"links":["l1"]}`,
		gns3tools.ToolLinkConditions:          `{"action":"clear","link":"l1"}`,
		consoletools.ToolDeviceConfigCommands: `{"device_configs":[{"device_name":"R1","config_commands":["no shut"]}]}`,
		consoletools.ToolVPCSCommands:         `{"device_configs":[{"device_name":"PC1","commands":["ip dhcp"]}]}`,
	}
	for _, name := range labChanging {
		a, ok := args[name]
		if !ok {
			t.Errorf("no sample arguments for %s", name)
			continue
		}
		if s := approval.Summary(name, a); s == "" || strings.HasPrefix(s, name) {
			t.Errorf("Summary(%s) = %q: the fallback, not the tool's own", name, s)
		}
	}
}
