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
	GNS3CopilotDescription = "GNS3 network-lab copilot: explains, builds and troubleshoots lab topologies (modes teaching_assistant, the default, and lab_automation_assistant)."
	MediaAgentDescription  = "Media requests assistant: finds movies and TV shows and requests them through Overseerr/Jellyseerr (Seerr)."
)

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
