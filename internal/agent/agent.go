// Package agent is the agent runtime of agentchat: agents made of skills and
// tools, their registry, and the loop that streams an LLM answer, runs the
// tools it asks for, persists each step and reports typed events.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// Tool is a function the model may call.
type Tool struct {
	// Name is the function name given to the model.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON schema of the arguments object.
	Parameters json.RawMessage
	// SideEffects is true when running the tool changes something outside
	// agentchat (a request placed, a node started). Clients are then told
	// not to retry the request.
	SideEffects bool
	// Run executes the tool with the model's JSON arguments. Its error is
	// shown to the model as the tool's output.
	Run func(ctx context.Context, args json.RawMessage) (string, error)
}

// Execute runs the tool.
func (t Tool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	if t.Run == nil {
		return "", fmt.Errorf("tool %s has no implementation", t.Name)
	}
	return t.Run(ctx, args)
}

// Skill is a prompt fragment with the tools it explains.
type Skill struct {
	Name   string
	Prompt string
	Tools  []Tool
}

// TurnInfo describes the turn an agent is being prepared for.
type TurnInfo struct {
	ProjectID string
	UserID    string
	// Mode is the agent mode asked for by the client (copilot_mode), or empty.
	Mode string
}

// Agent is a system prompt with skills.
type Agent struct {
	ID           string
	Description  string
	SystemPrompt string
	Skills       []Skill
	// Prepare, when set, adapts the agent to one turn: it may add context to
	// the system prompt (for example a project topology) and choose skills
	// by mode. It returns the extra prompt text and the skills to use.
	Prepare func(ctx context.Context, t TurnInfo) (extraPrompt string, skills []Skill, err error)
}

// Tools returns the tools of the given skills.
func Tools(skills []Skill) []Tool {
	var out []Tool
	for _, s := range skills {
		out = append(out, s.Tools...)
	}
	return out
}

// Registry holds the agents a server offers, by id.
type Registry struct {
	agents   map[string]*Agent
	fallback string
}

// NewRegistry returns a registry whose unknown ids resolve to fallback.
func NewRegistry(fallback string) *Registry {
	return &Registry{agents: map[string]*Agent{}, fallback: fallback}
}

// Register adds or replaces an agent.
func (r *Registry) Register(a *Agent) { r.agents[a.ID] = a }

// Get returns the agent with that id.
func (r *Registry) Get(id string) (*Agent, bool) {
	a, ok := r.agents[id]
	return a, ok
}

// Resolve returns the first registered agent among ids, else the fallback.
func (r *Registry) Resolve(ids ...string) *Agent {
	for _, id := range ids {
		if a, ok := r.agents[id]; ok {
			return a
		}
	}
	return r.agents[r.fallback]
}

// List returns the agents sorted by id.
func (r *Registry) List() []*Agent {
	out := make([]*Agent, 0, len(r.agents))
	for _, a := range r.agents {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
