package gns3tools

import (
	"context"

	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// spec is one tool, in both its project-chat and its /v1 form.
type spec = toolkit.Def[*call]

// call is the state of one tool call: the project, the caller's token and
// the bound on parallel GNS3 requests.
type call struct {
	*Toolset
	toolkit.Call
	sem chan struct{}
}

func (s *Toolset) newCall(_ context.Context, c toolkit.Call) *call {
	return &call{Toolset: s, Call: c, sem: make(chan struct{}, s.concurrency)}
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
func (c *call) nodes(ctx context.Context) (toolkit.Nodes, error) {
	var nodes []gns3.Node
	err := c.limit(ctx, func() (err error) {
		nodes, err = c.client.GetNodes(ctx, c.Token, c.ProjectID)
		return err
	})
	return toolkit.Nodes(nodes), err
}
