// Package catalog names agentchat's agents: the id and description of
// each, without prompts, tools or runtime. It is for what only lists the
// agents (GET /v1/agents in AWS Lambda, see package catalogfn), so that
// listing them links no agent code. The agents themselves are defined in
// package agents; a test checks that both say the same.
package catalog

// Agent ids.
const (
	Naked       = "naked"
	GNS3Copilot = "gns3-copilot"
	MediaAgent  = "media-agent"
)

// Agent descriptions.
const (
	NakedDescription       = "Plain assistant without tools; also answers for unknown model names."
	GNS3CopilotDescription = "GNS3 network-lab copilot: explains, builds and troubleshoots lab topologies (modes " +
		ModeTeachingAssistant + ", the default, and " + ModeLabAutomationAssistant + ")."
	MediaAgentDescription = "Media requests assistant: finds movies and TV shows and requests them through Overseerr/Jellyseerr (Seerr)."
)

// Modes of the gns3-copilot (copilot_mode), defined here only: the
// agent, the chat and gateway requests, the session listing and the LLM
// configurations all read them from this package, which links no agent
// code.
const (
	// ModeTeachingAssistant is the default mode: the copilot explains
	// and gives commands, it does not change the lab's configuration.
	ModeTeachingAssistant = "teaching_assistant"
	// ModeLabAutomationAssistant builds and operates the lab for the user.
	ModeLabAutomationAssistant = "lab_automation_assistant"
	// ModeTroubleshootingInjection breaks a lab on purpose for a student
	// to repair. Only POST .../chat/inject starts it: requests and
	// configurations cannot ask for it (it is not among CopilotModes).
	ModeTroubleshootingInjection = "troubleshooting_injection"
)

// CopilotModes returns the gns3-copilot modes a request or an LLM
// configuration may ask for, the default first, in a new slice on each
// call.
func CopilotModes() []string { return []string{ModeTeachingAssistant, ModeLabAutomationAssistant} }

// AllCopilotModes returns every gns3-copilot mode: CopilotModes, then
// ModeTroubleshootingInjection, in a new slice on each call.
func AllCopilotModes() []string { return append(CopilotModes(), ModeTroubleshootingInjection) }

// Entry is one agent of the catalogue, as GET /v1/agents lists it.
type Entry struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// Entries returns the agents sorted by id (the order of
// agent.Registry.List), in a new slice on each call.
func Entries() []Entry {
	return []Entry{
		{ID: GNS3Copilot, Description: GNS3CopilotDescription},
		{ID: MediaAgent, Description: MediaAgentDescription},
		{ID: Naked, Description: NakedDescription},
	}
}
