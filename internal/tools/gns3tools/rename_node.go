package gns3tools

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// renameArgs are the arguments of update_gns3_node_name.
type renameArgs struct {
	Nodes []rename `json:"nodes" jsonschema:"The nodes to rename (1 to 50)."`
}

// rename is one node to rename.
type rename struct {
	Node    string `json:"node" jsonschema:"The node: its current name or node_id."`
	NewName string `json:"new_name" jsonschema:"Its new name, unique in the project."`
}

// renamedNode is the result of one rename.
type renamedNode struct {
	Node    string `json:"node"`
	NodeID  string `json:"node_id,omitempty"`
	OldName string `json:"old_name,omitempty"`
	Name    string `json:"name,omitempty"`
	toolkit.Outcome
}

func renameNodeSpec() *spec {
	sp := toolkit.Define(ToolUpdateNodeName,
		"Rename nodes of the GNS3 project (1 to 50 per call). Each new name must be unique in the project.",
		func(s *jsonschema.Schema) {
			toolkit.NonEmpty(toolkit.Array(s, "nodes", 1, maxNodeRefs).Items, "node", "new_name")
		}, renameNodes)
	sp.SideEffects, sp.Tier = true, agent.TierBuild
	return sp
}

func renameNodes(ctx context.Context, c *call, a renameArgs) toolkit.Report[renamedNode] {
	items := make([]renamedNode, len(a.Nodes))
	for i, r := range a.Nodes {
		items[i].Node = r.Node
	}
	nodes, err := c.nodes(ctx)
	if err != nil {
		return toolkit.FailAll(items, "cannot read the project's nodes: "+toolkit.Describe(err))
	}
	targets := make([]*gns3.Node, len(items))
	for i, r := range a.Nodes {
		n, err := nodes.Resolve(r.Node)
		if err != nil {
			items[i].FailErr(err)
			continue
		}
		items[i].NodeID, items[i].OldName, items[i].Name = n.NodeID, n.Name, n.Name
		targets[i] = n
	}
	toolkit.ForEach(len(items), func(i int) {
		n, it := targets[i], &items[i]
		if n == nil {
			return
		}
		if n.Name == a.Nodes[i].NewName {
			it.Succeed()
			return
		}
		var got *gns3.Node
		err := c.limit(ctx, func() (err error) {
			got, err = c.client.UpdateNode(ctx, c.Token, c.ProjectID, n.NodeID, map[string]any{"name": a.Nodes[i].NewName})
			return err
		})
		if err != nil {
			it.Fail("cannot rename " + n.Name + ": " + toolkit.Describe(err))
			return
		}
		it.Name = got.Name
		if got.Name != a.Nodes[i].NewName {
			it.Fail(nameTaken(a.Nodes[i].NewName, got.Name))
			return
		}
		it.Succeed()
	})
	return toolkit.Finish(items)
}

// nameTaken explains a node that GNS3 named otherwise than asked: it does
// so when the name is already used.
func nameTaken(asked, got string) string {
	return "GNS3 named the node " + got + " instead of " + asked + " (the name is probably used by another node)"
}
