package agents

import (
	"context"
	"encoding/json"

	"agentchat/internal/agent"
	"agentchat/internal/agents/catalog"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/gns3tools"
	"agentchat/internal/tools/knowledge"
)

// ModeTroubleshootingInjection is the gns3-copilot mode that breaks a lab
// on purpose for a student to repair (catalog.ModeTroubleshootingInjection).
// Only POST .../chat/inject starts it (ParseMode, for requests and
// configurations, does not accept it); its sessions record it like any
// mode.
const ModeTroubleshootingInjection = catalog.ModeTroubleshootingInjection

// Names of lab tools of other packages that the injection mode offers
// (the link tools of gns3tools; a name no toolset gives is simply never
// offered).
const (
	toolLinkConditions = "manage_gns3_link_conditions"
	toolAnalyzeTraffic = "analyze_link_traffic"
)

// AllModes returns every mode of the gns3-copilot: those a request may
// ask for (Modes), then troubleshooting_injection.
func AllModes() []string { return catalog.AllCopilotModes() }

// parseTurnMode validates the mode the runtime resolved for a turn: one of
// AllModes, or empty for DefaultMode.
func parseTurnMode(s string) (string, error) {
	if s == ModeTroubleshootingInjection {
		return s, nil
	}
	return ParseMode(s)
}

// injectionToolAllowed is the tool table of troubleshooting_injection:
// reading the topology, show and configuration commands, link
// conditions, the fault scenarios and the device knowledge (and reading a
// link's traffic, allowed in every mode). Nodes and links are never
// created, stopped or deleted in this mode.
func injectionToolAllowed(tool string) bool {
	switch tool {
	case gns3tools.ToolTopologyReader, gns3tools.ToolListProjects,
		consoletools.ToolDeviceCommands, consoletools.ToolDeviceConfigCommands, consoletools.ToolVPCSCommands,
		toolLinkConditions, toolAnalyzeTraffic,
		knowledge.ToolInjectionScenarios, knowledge.ToolDeviceSkills:
		return true
	}
	return false
}

// DefaultInjectionRequest is the request of an /inject turn sent without a
// message.
const DefaultInjectionRequest = "Inject one fault into this lab for me to troubleshoot: pick one that fits the topology, inject it, verify that it bites, and end with your report."

const injectionPrompt = `Mode: troubleshooting_injection. You break this lab on purpose so that a student can practise troubleshooting. The person talking to you is the instructor (or the student's tool); the student will look at the lab, not at this conversation.
How you work:
1. Read the topology (the JSON below, gns3_topology_reader when it changed) and look at the devices with show commands: which nodes are started, what they run (addressing, VLANs, OSPF, BGP, ACLs), what works now. Never break what does not work already; never stop, delete or rewire nodes.
2. Choose faults that fit this topology: list the scenarios (injection_scenarios {action: list}), keep only those whose requirements the lab meets, read the chosen ones in full (action: get), and read device_skills for each platform you will type on. Inject as many faults as asked (one when not said); prefer faults that are realistic and can be found with show commands and pings.
3. Inject each fault with the smallest change: configuration commands on the device, VPCS commands on a PC, or manage_gns3_link_conditions for loss, delay or a dead link (with show_icon false, so that the lab does not give it away). Never touch passwords, AAA, users or management access, never erase, reload or save over a startup configuration unless asked, and never type what device_skills says to avoid.
4. Verify that each fault bites: show commands or a ping that worked before now fail (or the neighbour is gone). If it does not bite, undo it and choose another.
5. End with a report, one section per fault: the scenario, the device (or link) and interface changed, the exact commands typed (or conditions set), the symptom the student will see, and the exact commands to undo it. Say plainly if something failed. This report is for the instructor: do not hide it, but do not give hints about the faults anywhere else.
Answer in the language the request is written in.`

// hideConditionsIcon makes the link-conditions tool of tools hide its icon
// from the web UI unless the model asks for it: an injected fault must not
// show on the student's canvas. A set or clear without show_icon gets
// show_icon false; arguments that are not an object go through unchanged
// (the tool refuses them).
func hideConditionsIcon(tools []agent.Tool) {
	for i := range tools {
		if tools[i].Name != toolLinkConditions {
			continue
		}
		run := tools[i].Run
		tools[i].Run = func(ctx context.Context, args json.RawMessage) (string, error) {
			var a map[string]json.RawMessage
			if json.Unmarshal(args, &a) == nil && a != nil {
				var action string
				_ = json.Unmarshal(a["action"], &action)
				if _, given := a["show_icon"]; !given && (action == "set" || action == "clear") {
					a["show_icon"] = json.RawMessage("false")
					if b, err := json.Marshal(a); err == nil {
						args = b
					}
				}
			}
			return run(ctx, args)
		}
	}
}
