// Package agents is the catalogue of agentchat's agents: it builds the
// default registry with naked (the fallback), gns3-copilot and media-agent.
package agents

import (
	"context"

	"agentchat/internal/agent"
	"agentchat/internal/agents/catalog"
	"agentchat/internal/seerr"
	"agentchat/internal/tools/seerrtools"
)

// Agent ids.
const (
	Naked       = catalog.Naked
	GNS3Copilot = catalog.GNS3Copilot
	MediaAgent  = catalog.MediaAgent
)

// Deps are what the agents need from the server.
type Deps struct {
	// Seerr is the client of the media agent; nil or unconfigured: its
	// tools answer "Seerr is not configured".
	Seerr *seerr.Client
	// GNS3Topology returns the topology section of a project's system
	// prompt, fetched with the caller's token (gns3topo.Provider.Prompt);
	// nil: the copilot is given no topology.
	GNS3Topology func(ctx context.Context, projectID string) string
	// GNS3Tools are the copilot's lab tools (gns3tools.Toolset); nil: the
	// copilot runs without tools.
	GNS3Tools LabTools
}

// LabTools gives the gns3-copilot's lab tools of every mode; the copilot
// offers those of the turn's mode.
type LabTools interface {
	// Project returns the tools of a project chat turn: the project is
	// fixed by the route, so no tool takes a project id.
	Project(projectID string) []agent.Tool
	// Gateway returns the tools of a /v1 turn: each takes a project_id,
	// and list_gns3_projects is among them.
	Gateway() []agent.Tool
}

// CombineLabTools offers the tools of every set, in order (the lab tools,
// then the device console tools).
func CombineLabTools(sets ...LabTools) LabTools { return labSets(sets) }

type labSets []LabTools

func (l labSets) Project(projectID string) []agent.Tool {
	var out []agent.Tool
	for _, s := range l {
		out = append(out, s.Project(projectID)...)
	}
	return out
}

func (l labSets) Gateway() []agent.Tool {
	var out []agent.Tool
	for _, s := range l {
		out = append(out, s.Gateway()...)
	}
	return out
}

// DefaultRegistry returns the registry of the three agents, falling back to
// naked for unknown ids (such as "gpt-3.5-turbo").
func DefaultRegistry(deps Deps) *agent.Registry {
	r := agent.NewRegistry(Naked)
	r.Register(NewNaked())
	r.Register(NewGNS3Copilot(deps.GNS3Topology, deps.GNS3Tools))
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

// NewMediaAgent returns the media requests assistant with the Seerr skill
// of c (nil or unconfigured: the tools report that Seerr is not configured).
func NewMediaAgent(c *seerr.Client) *agent.Agent {
	return &agent.Agent{
		ID:          MediaAgent,
		Description: catalog.MediaAgentDescription,
		SystemPrompt: "You are the Media Agent: you help people find movies and TV shows and request them for their media library. " +
			"Be brief and friendly. Check facts (titles, years, availability, existing requests) with your tools instead of guessing. " +
			"After a request, say what was requested and whether it awaits approval. If Seerr is not configured or fails, tell the user plainly.",
		Skills: []agent.Skill{seerrtools.Skill(c)},
	}
}
