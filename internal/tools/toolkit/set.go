package toolkit

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
)

// Call is one tool call: the tool, the project it acts on ("" for a
// Global tool) and the caller's GNS3 token (auth.FromContext; "" without
// an identity).
type Call struct {
	// Tool is the name of the tool called.
	Tool string
	// ProjectID is the project of the route, or the project_id argument.
	ProjectID string
	// Token is the caller's GNS3 bearer token, never to be shown.
	Token string
}

// Set is the tools of a toolset and how their calls run.
type Set[E any] struct {
	// Defs are the tools, in the order they are given to the model.
	Defs []*Def[E]
	// Configured is false when the server has no GNS3 controller (or no
	// service of the toolset): every tool then fails with NotConfigured.
	Configured bool
	// NotConfigured is the error of every tool when not Configured (nil:
	// ErrNotConfigured, GNS3's).
	NotConfigured error
	// Begin makes the environment of one call from its validated
	// arguments' project and the caller's token.
	Begin func(ctx context.Context, c Call) E
	// Logger receives a warning, Failures, for every call with failed
	// items: the tool, the project, the counts and the first error (nil:
	// slog.Default()).
	Logger *slog.Logger
	// Failures is the message of that warning ("gns3 tool had failures").
	Failures string
}

// Project returns the project-chat tools for projectID, the project fixed
// by the route: no tool takes a project_id, and the Global ones are not
// among them.
func (s *Set[E]) Project(projectID string) []agent.Tool {
	out := make([]agent.Tool, 0, len(s.Defs))
	for _, d := range s.Defs {
		if !d.Global {
			out = append(out, s.tool(d, projectID, false))
		}
	}
	return out
}

// Gateway returns the tools of the stateless /v1 gateway: every project
// tool with a required project_id (a UUID) first in its schema, and the
// Global tools.
func (s *Set[E]) Gateway() []agent.Tool {
	out := make([]agent.Tool, 0, len(s.Defs))
	for _, d := range s.Defs {
		out = append(out, s.tool(d, "", true))
	}
	return out
}

// Tools returns every tool without a project_id, the Global ones
// included: the tools of a toolset that addresses no project (the Seerr
// tools).
func (s *Set[E]) Tools() []agent.Tool {
	out := make([]agent.Tool, 0, len(s.Defs))
	for _, d := range s.Defs {
		out = append(out, s.tool(d, "", false))
	}
	return out
}

// tool is d as an agent.Tool on projectID or, on the gateway, on the
// project_id argument.
func (s *Set[E]) tool(d *Def[E], projectID string, gateway bool) agent.Tool {
	args := d.Args(gateway)
	perCall := gateway && !d.Global
	return agent.Tool{
		Name:        d.Name,
		Description: d.Description,
		Parameters:  args.JSON(),
		SideEffects: d.SideEffects,
		Tier:        d.Tier,
		Timeout:     d.Timeout,
		Run: func(ctx context.Context, raw json.RawMessage) (string, error) {
			if !s.Configured {
				return "", cmp.Or(s.NotConfigured, ErrNotConfigured)
			}
			m, err := args.Parse(raw)
			if err != nil {
				return "", err
			}
			c := Call{Tool: d.Name, ProjectID: projectID}
			if perCall {
				c.ProjectID, _ = m["project_id"].(string)
				delete(m, "project_id")
			}
			if id, ok := auth.FromContext(ctx); ok {
				c.Token = id.Token
			}
			out, err := d.run(ctx, s.Begin(ctx, c), m)
			if err != nil {
				return "", err
			}
			if a, ok := out.(Answer); ok {
				s.logFailures(ctx, c, a)
			}
			return Encode(out)
		},
	}
}

// logFailures warns of the failed items of the answer a to the call c.
func (s *Set[E]) logFailures(ctx context.Context, c Call, a Answer) {
	if total, failed, first := a.summary(); failed > 0 {
		cmp.Or(s.Logger, slog.Default()).WarnContext(ctx, s.Failures, "tool", c.Tool, "project_id", c.ProjectID,
			"total", total, "failed", failed, "first_error", first)
	}
}
