package gns3tools

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// deletedNode is the result of deleting one node.
type deletedNode struct {
	Node   string `json:"node"`
	NodeID string `json:"node_id,omitempty"`
	Name   string `json:"name,omitempty"`
	toolkit.Outcome
}

func deleteNodeSpec() *spec {
	sp := toolkit.Define(ToolDeleteNode,
		"Delete nodes from the GNS3 project (1 to 50 per call), with their links. This cannot be undone.",
		func(s *jsonschema.Schema) {
			p := toolkit.Array(s, "nodes", 1, maxNodeRefs)
			p.UniqueItems = true
			p.Description = "The nodes to delete, each by its name or node_id (1 to 50)."
			p.Items.MinLength = jsonschema.Ptr(1)
		}, deleteNodes)
	sp.SideEffects, sp.Tier = true, agent.TierDestructive
	return sp
}

func deleteNodes(ctx context.Context, c *call, a nodeRefsArgs) toolkit.Report[deletedNode] {
	items := make([]deletedNode, len(a.Nodes))
	for i, r := range a.Nodes {
		items[i].Node = r
	}
	nodes, err := c.nodes(ctx)
	if err != nil {
		return toolkit.FailAll(items, "cannot read the project's nodes: "+toolkit.Describe(err))
	}
	targets := make([]*gns3.Node, len(items))
	seen := map[string]bool{}
	for i, r := range a.Nodes {
		n, err := nodes.Resolve(r)
		switch {
		case err != nil:
			items[i].FailErr(err)
			continue
		case seen[n.NodeID]:
			items[i].Fail("node " + n.Name + " is named twice in this call")
			continue
		}
		seen[n.NodeID] = true
		items[i].NodeID, items[i].Name = n.NodeID, n.Name
		targets[i] = n
	}
	toolkit.ForEach(len(items), func(i int) {
		n := targets[i]
		if n == nil {
			return
		}
		err := c.limit(ctx, func() error {
			return c.client.DeleteNode(ctx, c.Token, c.ProjectID, n.NodeID)
		})
		if err != nil {
			items[i].Fail("cannot delete " + n.Name + ": " + toolkit.Describe(err))
			return
		}
		items[i].Succeed()
	})
	return toolkit.Finish(items)
}
