package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"agentchat/internal/agent"
	"agentchat/internal/agents/catalog"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/gns3tools"
	"agentchat/internal/tools/knowledge"
)

// Modes of the gns3-copilot (copilot_mode), as package catalog defines
// them.
const (
	ModeTeachingAssistant      = catalog.ModeTeachingAssistant
	ModeLabAutomationAssistant = catalog.ModeLabAutomationAssistant
	// DefaultMode applies when neither the request nor the session names a
	// mode.
	DefaultMode = ModeTeachingAssistant
)

// Modes returns the gns3-copilot modes, the default first.
func Modes() []string { return catalog.CopilotModes() }

// ParseMode validates a copilot_mode: empty means DefaultMode; case and
// surrounding spaces are ignored.
func ParseMode(s string) (string, error) {
	m := strings.ToLower(strings.TrimSpace(s))
	switch m {
	case "":
		return DefaultMode, nil
	case ModeTeachingAssistant, ModeLabAutomationAssistant:
		return m, nil
	}
	return "", fmt.Errorf("unknown copilot_mode %q (want %s)", s, strings.Join(Modes(), " or "))
}

// ToolAllowed reports whether the gns3-copilot may run tool in mode (the
// table of DESIGN.md "gns3-copilot modes"). A tool outside the table is
// allowed in no mode.
func ToolAllowed(mode, tool string) bool {
	if mode == ModeTroubleshootingInjection {
		return injectionToolAllowed(tool)
	}
	switch tool {
	case gns3tools.ToolTopologyReader, gns3tools.ToolGetTemplates, gns3tools.ToolListProjects,
		gns3tools.ToolCreateNode, gns3tools.ToolCreateLink, gns3tools.ToolStartNode, gns3tools.ToolUpdateNodeName,
		consoletools.ToolDeviceCommands, knowledge.ToolDeviceSkills, knowledge.ToolWaitSeconds, gns3tools.ToolAnalyzeTraffic:
		return mode == ModeTeachingAssistant || mode == ModeLabAutomationAssistant
	case gns3tools.ToolStopNode, gns3tools.ToolSuspendNode, gns3tools.ToolDeleteNode, gns3tools.ToolDeleteLink,
		consoletools.ToolDeviceConfigCommands, consoletools.ToolVPCSCommands, gns3tools.ToolLinkConditions:
		return mode == ModeLabAutomationAssistant
	}
	return false
}

// modeOfTool is the mode that allows tool, empty when none does.
func modeOfTool(tool string) string {
	for _, m := range Modes() {
		if ToolAllowed(m, tool) {
			return m
		}
	}
	return ""
}

const gns3Prompt = `You are the GNS3 Copilot, an assistant for network engineers and students working in GNS3 labs: routers, switches, firewalls, VPCS hosts and the links between them. You help them design topologies, build them, configure devices, understand protocols (addressing, VLANs, STP, OSPF, EIGRP, BGP, NAT, ACLs, ...) and troubleshoot.

How you work:
- Answer in the language the user writes in.
- Ground every statement about the lab in the project topology JSON and in tool results; never invent nodes, links, ports, ids or states. Use the node names, node_ids, port names and link_ids exactly as the topology lists them rather than guessing; if something is not there, say so.
- Look before you change, and verify after: read the topology (or run show commands) first, act, then check the result.
- Tools answer JSON with success, total, successful, failed and one result per item. Report plainly what succeeded and what failed, with the error as given; never claim an action that a tool did not report as successful.
- Safety first: never run a destructive or disruptive action (deleting or stopping nodes, deleting links, erasing or overwriting configurations, reloading devices, rewiring a running lab) unless the user explicitly asked for it. Never configure AAA, users or passwords, and never reload, erase or format a device, unless the user asks for that by name. When a request is ambiguous, ask before acting and say what you are about to change.
- Never ask for, repeat or reveal credentials, tokens or keys.
- Put device commands and configuration in code blocks, one command per line.
- When unsure of a platform's prompts, show commands or syntax, read device_skills before typing. After starting nodes, wait_seconds gives them time to boot before you use their consoles.`

const teachingPrompt = `Mode: teaching_assistant. You are a teacher beside the student's lab.
- Explain how rather than doing it for them: for a problem, give the diagnosis, the root cause, the solution and how to verify it, and the reasoning behind each step.
- You may read the topology and the node templates, add nodes and links, start and rename nodes, run show commands on devices to look at their state, and read a link's traffic (analyze_link_traffic) to show the student what the protocols actually send.
- You never change device configuration in this mode, and you do not stop, suspend or delete nodes or links: give the student the exact commands to type instead, and mention that the lab_automation_assistant mode can do it for them.
- Prefer short answers that end with what the student should try next.`

const automationPrompt = `Mode: lab_automation_assistant. You build and operate the lab for the user.
- Plan, act, report: say briefly what you will do, use the tools to do it (several items in one call where the tool allows), then report what changed, item by item, and how you verified it.
- You may read the topology and templates, create, start, stop, suspend, rename and delete nodes, create and delete links, run show commands, push configuration commands, run VPCS commands, read a link's traffic (analyze_link_traffic) and degrade a link on request (manage_gns3_link_conditions: loss, delay, corruption, drops).
- Before a disruptive change the user did not explicitly ask for (stopping or deleting a node, deleting a link, changing a running device's configuration), ask first.
- After creating or changing something, check it against the updated topology or with show commands.`

const gatewayPrompt = `No GNS3 project is fixed in this conversation: call list_gns3_projects to see the user's projects, and pass the project_id of the chosen project to every other GNS3 tool. Read its topology with gns3_topology_reader before acting on it.`

const gns3NoTools = "GNS3 tools are not available on this server: you cannot read or change the lab. Explain, guide and give the commands for the user to run."

func modePrompt(mode string) string {
	switch mode {
	case ModeLabAutomationAssistant:
		return automationPrompt
	case ModeTroubleshootingInjection:
		return injectionPrompt
	}
	return teachingPrompt
}

// refusal is the tool message of a call that the mode does not allow.
func refusal(mode, tool string) string {
	if other := modeOfTool(tool); other != "" && other != mode {
		return fmt.Sprintf("Error: tool %s is not allowed in %s mode; nothing was done. It needs the %s mode: give the user the steps or commands to do it themselves, or suggest switching to %s mode.", tool, mode, other, other)
	}
	return fmt.Sprintf("Error: tool %q is not allowed in %s mode; nothing was done. Use only the tools you are offered.", tool, mode)
}

// NewGNS3Copilot returns the GNS3 network-lab copilot. Each turn it runs in
// the mode the runtime resolved (ParseMode; the default when empty): the
// system prompt of that mode, the project topology from topology (none
// when nil), and the tools of tools allowed in that mode; any other tool
// the model calls is refused. The topology is read as the turn starts
// (Begin), beside the opening of its session; after a step that changed
// the lab, it is fetched again for the next LLM call. On the stateless
// gateway (no project) the tools take a project_id. Without tools the
// model is told it cannot act on the lab.
func NewGNS3Copilot(topology func(ctx context.Context, projectID string) string, tools LabTools) *agent.Agent {
	return &agent.Agent{
		ID:           GNS3Copilot,
		Description:  catalog.GNS3CopilotDescription,
		SystemPrompt: gns3Prompt,
		Modes:        AllModes(),
		Begin: func(ctx context.Context, t agent.TurnInfo) agent.Preparer {
			c := copilotTurn{projectID: t.ProjectID, topology: topology, tools: tools}
			// The topology section: none on the gateway with tools (the
			// model reads the projects it is asked about), read now for a
			// project, else the plain words of topology itself.
			switch {
			case topology == nil || (c.projectID == "" && tools != nil):
			case c.projectID == "":
				c.section = func(ctx context.Context) (string, error) { return topology(ctx, ""), nil }
			default:
				c.section = agent.Prefetch(ctx, func(ctx context.Context) string { return topology(ctx, c.projectID) })
			}
			return c.prepare
		},
	}
}

// copilotTurn is the GNS3 copilot's preparation of one turn, begun.
type copilotTurn struct {
	projectID string
	topology  func(ctx context.Context, projectID string) string
	tools     LabTools
	// section waits for the topology section begun for the turn (nil:
	// none).
	section func(context.Context) (string, error)
}

// prepare completes the preparation in the turn's mode: the mode's
// prompt, the tools it allows, and the topology section with its refresh.
func (c copilotTurn) prepare(ctx context.Context, turnMode string) (agent.Preparation, error) {
	mode, err := parseTurnMode(turnMode)
	if err != nil {
		return agent.Preparation{}, err
	}
	base := modePrompt(mode)
	p := agent.Preparation{Refuse: func(name string) string { return refusal(mode, name) }}
	if c.tools == nil {
		base += "\n\n" + gns3NoTools
	} else {
		// One of the two sets: each is built afresh for the turn.
		var all []agent.Tool
		if c.projectID != "" {
			all = c.tools.Project(c.projectID)
		} else {
			all = c.tools.Gateway()
		}
		offered := slices.DeleteFunc(slices.Clone(all), func(tool agent.Tool) bool { return !ToolAllowed(mode, tool.Name) })
		if mode == ModeTroubleshootingInjection {
			hideConditionsIcon(offered)
		}
		p.Skills = []agent.Skill{{Name: "gns3-" + mode, Tools: offered}}
	}
	switch {
	case c.projectID == "" && c.tools != nil:
		p.Prompt = base + "\n\n" + gatewayPrompt
	case c.section == nil:
		p.Prompt = base
	default:
		topo, err := c.section(ctx)
		if err != nil {
			return agent.Preparation{}, fmt.Errorf("project topology: %w", err)
		}
		p.Prompt = base + "\n\n" + topo
		if c.projectID != "" {
			p.Refresh = func(ctx context.Context) (string, error) {
				return base + "\n\n" + c.topology(ctx, c.projectID), nil
			}
		}
	}
	return p, nil
}
