// Package agents is the catalogue of agentchat's agents: it builds the
// default registry with naked (the fallback), gns3-copilot and media-agent.
package agents

import (
	"agentchat/internal/agents/catalog"
	"context"
	"fmt"
	"strings"

	"agentchat/internal/agent"
	"agentchat/internal/tools/seerr"
)

// Agent ids.
const (
	Naked       = catalog.Naked
	GNS3Copilot = catalog.GNS3Copilot
	MediaAgent  = catalog.MediaAgent
)

// Modes of the gns3-copilot (copilot_mode).
const (
	ModeTeachingAssistant      = "teaching_assistant"
	ModeLabAutomationAssistant = "lab_automation_assistant"
	// DefaultMode applies when the client names no mode.
	DefaultMode = ModeTeachingAssistant
)

// Modes returns the gns3-copilot modes, the default first.
func Modes() []string { return []string{ModeTeachingAssistant, ModeLabAutomationAssistant} }

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

// GNS3Hook prepares the gns3-copilot for one turn in a validated mode: it
// returns extra prompt text (such as the project topology as JSON) and the
// GNS3 skills that mode allows.
type GNS3Hook func(ctx context.Context, t agent.TurnInfo, mode string) (extraPrompt string, skills []agent.Skill, err error)

// Deps are what the agents need from the server.
type Deps struct {
	// Seerr is the client of the media agent; nil or unconfigured: its
	// tools answer "Seerr is not configured".
	Seerr *seerr.Client
	// GNS3 gives the gns3-copilot its topology and tools per turn; nil:
	// the copilot runs without tools.
	GNS3 GNS3Hook
}

// DefaultRegistry returns the registry of the three agents, falling back to
// naked for unknown ids (such as "gpt-3.5-turbo").
func DefaultRegistry(deps Deps) *agent.Registry {
	r := agent.NewRegistry(Naked)
	r.Register(NewNaked())
	r.Register(NewGNS3Copilot(deps.GNS3))
	r.Register(NewMediaAgent(deps.Seerr))
	return r
}

// NewNaked returns the plain assistant without tools.
func NewNaked() *agent.Agent {
	return &agent.Agent{
		ID:           Naked,
		Description:  catalog.NakedDescription,
		SystemPrompt: "You are a helpful assistant. Answer clearly and concisely, in the language the user writes in.",
	}
}

const gns3Prompt = `You are the GNS3 Copilot, an assistant for network labs built in GNS3: routers, switches, firewalls, VPCS hosts and the links between them. You help users design topologies, configure devices, understand protocols (addressing, VLANs, STP, OSPF, BGP, NAT, ...) and troubleshoot.

How you work:
- Ground every statement about the lab in the project topology and the tool results you are given; never invent nodes, links, ports or states. If something is not there, say so.
- Safety first: never run a destructive or disruptive action (deleting or stopping nodes, erasing or overwriting configurations, reloading devices, rewiring a running lab) unless the user explicitly asked for it. When a request is ambiguous, ask before acting and say what you are about to change.
- Look before you change: check the topology and run show commands first, and verify the result after a change.
- Explain what you do and why, in plain language, so the user learns. Put device commands in code blocks.
- If a tool fails, report the error as it is and suggest what the user can check.`

func modePrompt(mode string) string {
	if mode == ModeLabAutomationAssistant {
		return "Mode: lab_automation_assistant. Besides reading the lab, creating nodes and links, starting and renaming nodes and running show commands, you may stop and suspend nodes, push configuration commands to devices and run commands on VPCS hosts. Confirm any disruptive change the user did not explicitly ask for, and summarise what you changed."
	}
	return "Mode: teaching_assistant. Teach: explain concepts and the reasoning behind each step, and let the user type configuration commands themselves. You may read the lab topology and node templates, create nodes and links, start and rename nodes and run show commands. You do not stop or suspend nodes or push configuration in this mode; give the user the commands instead, or suggest the lab_automation_assistant mode."
}

const gns3NoTools = "GNS3 tools are not available on this server: you cannot read or change the lab. Explain, guide and give the commands for the user to run."

// gns3NoTurnTools is said when the hook gives the project context but no
// tools, so that the model does not claim to act on the lab.
const gns3NoTurnTools = "You have no GNS3 tools in this turn: you cannot change the lab or run commands on its devices. Use the project topology below when you have it; explain, guide and give the commands for the user to run."

// NewGNS3Copilot returns the GNS3 network-lab copilot. Its Prepare picks
// the mode from the turn (ParseMode) and asks hook for the topology and the
// skills of that mode; without hook it has no tools, and when hook gives no
// skills the model is told it cannot act on the lab.
func NewGNS3Copilot(hook GNS3Hook) *agent.Agent {
	return &agent.Agent{
		ID:           GNS3Copilot,
		Description:  catalog.GNS3CopilotDescription,
		SystemPrompt: gns3Prompt,
		Prepare: func(ctx context.Context, t agent.TurnInfo) (string, []agent.Skill, error) {
			mode, err := ParseMode(t.Mode)
			if err != nil {
				return "", nil, err
			}
			extra := modePrompt(mode)
			if hook == nil {
				return extra + "\n\n" + gns3NoTools, nil, nil
			}
			more, skills, err := hook(ctx, t, mode)
			if err != nil {
				return "", nil, fmt.Errorf("prepare %s (%s) for project %s: %w", GNS3Copilot, mode, t.ProjectID, err)
			}
			if len(skills) == 0 {
				extra += "\n\n" + gns3NoTurnTools
			}
			if more != "" {
				extra += "\n\n" + more
			}
			return extra, skills, nil
		},
	}
}

// NewMediaAgent returns the media requests assistant with the Seerr skill
// of c (nil or unconfigured: the tools report that Seerr is not configured).
func NewMediaAgent(c *seerr.Client) *agent.Agent {
	return &agent.Agent{
		ID:          MediaAgent,
		Description: catalog.MediaAgentDescription,
		SystemPrompt: "You are the Media Agent: you help people find movies and TV shows and request them for their media library. " +
			"Be brief and friendly. Check facts (titles, years, availability, existing requests) with your tools instead of guessing. " +
			"After a request, say what was requested and whether it awaits approval. If Seerr is not configured or fails, tell the user plainly.",
		Skills: []agent.Skill{seerr.Skill(c)},
	}
}
