package gns3tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/gns3"
)

// spec is one tool, in both its project-chat and its /v1 form.
type spec struct {
	name        string
	description string
	sideEffects bool
	// timeout is agent.Tool.Timeout (0: the runtime's default).
	timeout time.Duration
	// global tools (list_gns3_projects) address no project: they exist on
	// the gateway only, without a project_id.
	global  bool
	project *argsSchema // the arguments on the project chat
	gateway *argsSchema // the arguments on /v1: project_id added
	exec    func(ctx context.Context, c *call, args map[string]any) (summarizer, error)
}

// define makes the spec of a tool whose arguments are the struct A: its
// schema is inferred from A (json and jsonschema tags) and changed by
// adjust; run gets the validated arguments. A schema that cannot be built
// is a programming error and panics (the tests build every tool).
func define[A any, R summarizer](name, description string, adjust func(*jsonschema.Schema), run func(ctx context.Context, c *call, a A) R) *spec {
	s, err := inferSchema[A](adjust)
	if err != nil {
		panic(fmt.Sprintf("gns3tools: schema of %s: %v", name, err))
	}
	project, err := compile(s)
	if err != nil {
		panic(fmt.Sprintf("gns3tools: schema of %s: %v", name, err))
	}
	gateway, err := compile(withProjectID(s))
	if err != nil {
		panic(fmt.Sprintf("gns3tools: /v1 schema of %s: %v", name, err))
	}
	return &spec{
		name:        name,
		description: description,
		project:     project,
		gateway:     gateway,
		exec: func(ctx context.Context, c *call, m map[string]any) (summarizer, error) {
			var a A
			if err := bind(m, &a); err != nil {
				return nil, err
			}
			return run(ctx, c, a), nil
		},
	}
}

// agentTool is sp as an agent.Tool, on projectID or, for the gateway, on
// the project_id argument.
func (s *Toolset) agentTool(sp *spec, projectID string, gateway bool) agent.Tool {
	args := sp.project
	perCall := gateway && !sp.global
	if perCall {
		args = sp.gateway
	}
	return agent.Tool{
		Name:        sp.name,
		Description: sp.description,
		Parameters:  args.raw,
		SideEffects: sp.sideEffects,
		Timeout:     sp.timeout,
		Run: func(ctx context.Context, raw json.RawMessage) (string, error) {
			if s.client == nil {
				return "", ErrNotConfigured
			}
			m, err := args.parse(raw)
			if err != nil {
				return "", err
			}
			pid := projectID
			if perCall {
				pid, _ = m["project_id"].(string)
				delete(m, "project_id")
			}
			c := s.newCall(ctx, sp.name, pid)
			out, err := sp.exec(ctx, c, m)
			if err != nil {
				return "", err
			}
			s.logFailures(ctx, c, out)
			return encode(out)
		},
	}
}

// call is the state of one tool call: the project, the caller's token and
// the bound on parallel GNS3 requests.
type call struct {
	*Toolset
	tool      string
	projectID string
	token     string
	sem       chan struct{}
}

func (s *Toolset) newCall(ctx context.Context, tool, projectID string) *call {
	token := ""
	if id, ok := auth.FromContext(ctx); ok {
		token = id.Token
	}
	return &call{Toolset: s, tool: tool, projectID: projectID, token: token, sem: make(chan struct{}, s.concurrency)}
}

// limit runs one GNS3 request f within the call's concurrency bound.
func (c *call) limit(ctx context.Context, f func() error) error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.sem }()
	return f()
}

// nodes reads the project's nodes (once per tool call).
func (c *call) nodes(ctx context.Context) (nodeIndex, error) {
	var nodes []gns3.Node
	err := c.limit(ctx, func() (err error) {
		nodes, err = c.client.GetNodes(ctx, c.token, c.projectID)
		return err
	})
	return nodeIndex(nodes), err
}

// logFailures logs a call with failed items: the tool, the project and the
// first (secret-free) error.
func (s *Toolset) logFailures(ctx context.Context, c *call, out summarizer) {
	total, failed, first := out.summary()
	if failed == 0 {
		return
	}
	s.log.WarnContext(ctx, "gns3 tool had failures", "tool", c.tool, "project_id", c.projectID,
		"total", total, "failed", failed, "first_error", first)
}

// encode renders a tool answer as one line of JSON, without HTML escaping.
func encode(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode tool answer: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
