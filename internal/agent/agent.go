// Package agent is the agent runtime of agentchat: agents made of skills and
// tools, their registry, and the loop that streams an LLM answer, runs the
// tools it asks for, persists each step and reports typed events.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
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
	// Tier says what running the tool does to the lab (TierRead,
	// TierBuild, TierDestructive, TierConfigure); an approval policy
	// (package approval) pauses the tools of the changing tiers. Empty on
	// tools that touch no lab (the media agent's).
	Tier Tier
	// Timeout bounds one run of the tool; zero means the runtime's
	// ToolTimeout. A tool that waits on purpose (a node booting) sets it.
	Timeout time.Duration
	// Run executes the tool with the model's JSON arguments. Its error is
	// shown to the model as the tool's output.
	Run func(ctx context.Context, args json.RawMessage) (string, error)
}

// Tier is what a tool does to the lab it acts on.
type Tier string

// Tiers of the lab tools.
const (
	// TierRead tools only read (topology, templates, show commands).
	TierRead Tier = "read"
	// TierBuild tools add to the lab or change its state (create, start,
	// rename, link).
	TierBuild Tier = "build"
	// TierDestructive tools remove or stop something (delete, stop,
	// suspend, link conditions).
	TierDestructive Tier = "destructive"
	// TierConfigure tools change a device's configuration (config and
	// VPCS commands).
	TierConfigure Tier = "configure"
)

// ChangesLab reports whether a tool of tier t changes the lab or a device.
func (t Tier) ChangesLab() bool {
	return t == TierBuild || t == TierDestructive || t == TierConfigure
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
	// ProjectID is the project of a project chat turn; empty on the
	// stateless gateway, where no project is fixed.
	ProjectID string
	UserID    string
	// Mode is the turn's agent mode, resolved by the runtime (the request's,
	// else the session's, else the agent's default); empty for an agent
	// without modes.
	Mode string
}

// Preparation is what an agent's Prepare gives for one turn.
type Preparation struct {
	// Prompt is added to the system prompt (for example the project
	// topology and the rules of the mode).
	Prompt string
	// Skills are the skills offered to the model in this turn.
	Skills []Skill
	// Refuse, when set, answers a call of a tool that is not offered in
	// this turn (one of another mode, or one the model invented): a
	// non-empty text is the tool message, and nothing is run.
	Refuse func(name string) string
	// Refresh, when set, returns the Prompt anew; the runtime calls it
	// before an LLM call that follows a step in which a tool with
	// SideEffects ran, so that the model sees the lab as it is now.
	Refresh func(ctx context.Context) (string, error)
}

// Agent is a system prompt with skills.
type Agent struct {
	ID           string
	Description  string
	SystemPrompt string
	Skills       []Skill
	// Modes are the modes the agent can run in, the default first; empty
	// for an agent without modes. A session records the mode it was
	// created in (metadata store.MetadataCopilotMode).
	Modes []string
	// Prepare, when set, adapts the agent to one turn: it may add context to
	// the system prompt (for example a project topology), choose skills by
	// mode, refuse other tools and refresh its context after changes.
	Prepare func(ctx context.Context, t TurnInfo) (Preparation, error)
	// Begin, when set instead of Prepare, prepares the agent in two steps,
	// so that what it reads over the network for a turn (a project's
	// topology) is read beside the opening of the turn's session rather
	// than after it. Begin is called as a project chat turn starts, before
	// the session is opened and its mode known (t.Mode is empty), and
	// returns at once, its reads started; the Preparer it returns is called
	// at most once, when the turn runs, with the turn's mode. ctx ends when
	// the turn does, or at once when the turn is refused (the Preparer is
	// then never called). On the stateless gateway both steps run in a row.
	Begin func(ctx context.Context, t TurnInfo) Preparer
}

// Preparer completes, with the turn's mode, a preparation started by
// Agent.Begin.
type Preparer func(ctx context.Context, mode string) (Preparation, error)

// HasMode reports whether mode is one of the agent's modes.
func (a *Agent) HasMode(mode string) bool { return mode != "" && slices.Contains(a.Modes, mode) }

// DefaultMode returns the agent's first mode, empty without modes.
func (a *Agent) DefaultMode() string {
	if len(a.Modes) == 0 {
		return ""
	}
	return a.Modes[0]
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

// Prepared returns the agent's preparation for a turn whose mode is known
// (t.Mode): its Prepare, or its Begin and the Preparer in a row, or its
// skills as they are when it has neither.
func (a *Agent) Prepared(ctx context.Context, t TurnInfo) (Preparation, error) {
	switch {
	case a.Begin != nil:
		mode := t.Mode
		t.Mode = ""
		p, err := a.begin(ctx, t)
		if err != nil {
			return Preparation{}, fmt.Errorf("agent %s: %w", a.ID, err)
		}
		return p(ctx, mode)
	case a.Prepare != nil:
		return a.Prepare(ctx, t)
	}
	return Preparation{Skills: a.Skills}, nil
}

// errNoPreparer is a Begin that returned no Preparer.
var errNoPreparer = errors.New("begin gave no preparer")

// begin calls Begin (set) and checks that it gave a Preparer.
func (a *Agent) begin(ctx context.Context, t TurnInfo) (Preparer, error) {
	p := a.Begin(ctx, t)
	if p == nil {
		return nil, errNoPreparer
	}
	return p, nil
}
