package gns3tools

import (
	"context"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// createNodeArgs are the arguments of create_gns3_node.
type createNodeArgs struct {
	Nodes []newNode `json:"nodes" jsonschema:"The nodes to create (1 to 20)."`
}

// newNode is one node to create.
type newNode struct {
	Template string `json:"template" jsonschema:"Template to create the node from: its name (case-insensitive) or template_id, as listed by get_gns3_templates."`
	Name     string `json:"name,omitempty" jsonschema:"Name of the new node, unique in the project; GNS3 picks one (R1, PC1, ...) when omitted."`
	X        *int   `json:"x,omitempty" jsonschema:"Horizontal scene position; give x and y together. Omit both to place the node clear of the others."`
	Y        *int   `json:"y,omitempty" jsonschema:"Vertical scene position; give x and y together."`
}

// createdNode is the result of one new node.
type createdNode struct {
	Template string `json:"template"`
	NodeID   string `json:"node_id,omitempty"`
	Name     string `json:"name,omitempty"`
	NodeType string `json:"node_type,omitempty"`
	X        *int   `json:"x,omitempty"`
	Y        *int   `json:"y,omitempty"`
	// Ports are the node's port names, to link it next.
	Ports []string `json:"ports,omitempty"`
	toolkit.Outcome
}

func createNodeSpec() *spec {
	sp := toolkit.Define(ToolCreateNode,
		"Create nodes in the GNS3 project from templates (1 to 20 per call), optionally naming and placing them. "+
			"Nodes without x and y are placed clear of every other node. Each result gives the node_id, name, node_type "+
			"and the port names to use with create_gns3_link. New nodes are stopped: start them with start_gns3_node.",
		func(s *jsonschema.Schema) {
			items := toolkit.Array(s, "nodes", 1, maxCreateNodes).Items
			toolkit.NonEmpty(items, "template", "name")
			items.DependentRequired = map[string][]string{"x": {"y"}, "y": {"x"}}
		}, createNodes)
	sp.SideEffects, sp.Tier = true, agent.TierBuild
	return sp
}

func createNodes(ctx context.Context, c *call, a createNodeArgs) toolkit.Report[createdNode] {
	items := make([]createdNode, len(a.Nodes))
	var fixed []point
	auto := 0
	for i, n := range a.Nodes {
		items[i].Template = n.Template
		if n.X != nil && n.Y != nil {
			fixed = append(fixed, point{*n.X, *n.Y})
		} else {
			auto++
		}
	}
	var (
		templates  []gns3.Template
		existing   toolkit.Nodes
		tErr, nErr error
		wg         sync.WaitGroup
	)
	wg.Go(func() { templates, tErr = c.templates(ctx) })
	if auto > 0 {
		wg.Go(func() { existing, nErr = c.nodes(ctx) })
	}
	wg.Wait()
	if tErr != nil {
		return toolkit.FailAll(items, "cannot list the templates: "+toolkit.Describe(tErr))
	}
	if nErr != nil {
		return toolkit.FailAll(items, "cannot read the project's nodes to place the new ones: "+toolkit.Describe(nErr))
	}
	chosen := make([]*gns3.Template, len(items))
	for i, n := range a.Nodes {
		t, err := resolveTemplate(templates, n.Template)
		if err != nil {
			items[i].FailErr(err)
			continue
		}
		chosen[i] = t
	}
	spots := layout(existing, fixed, auto)
	at := make([]point, len(items))
	for i, n := range a.Nodes {
		if n.X != nil && n.Y != nil {
			at[i] = point{*n.X, *n.Y}
		} else {
			at[i], spots = spots[0], spots[1:]
		}
	}
	toolkit.ForEach(len(items), func(i int) {
		if chosen[i] != nil {
			c.createNode(ctx, &items[i], chosen[i], a.Nodes[i].Name, at[i])
		}
	})
	return toolkit.Finish(items)
}

// createNode creates one node from t at p, then names it when asked.
func (c *call) createNode(ctx context.Context, it *createdNode, t *gns3.Template, name string, p point) {
	var node *gns3.Node
	err := c.limit(ctx, func() (err error) {
		node, err = c.client.CreateNodeFromTemplate(ctx, c.Token, c.ProjectID, t.TemplateID, p.x, p.y, t.ComputeID)
		return err
	})
	if err != nil {
		it.Fail("cannot create a node from template " + t.Name + ": " + toolkit.Describe(err))
		return
	}
	it.fill(node)
	if name == "" || name == node.Name {
		it.Succeed()
		return
	}
	var named *gns3.Node
	err = c.limit(ctx, func() (err error) {
		named, err = c.client.UpdateNode(ctx, c.Token, c.ProjectID, node.NodeID, map[string]any{"name": name})
		return err
	})
	if err != nil {
		it.Fail("created as " + node.Name + " but naming it '" + name + "' failed: " + toolkit.Describe(err))
		return
	}
	it.fill(named)
	if named.Name != name {
		it.Fail("created, but " + nameTaken(name, named.Name))
		return
	}
	it.Succeed()
}

func (it *createdNode) fill(n *gns3.Node) {
	x, y := n.X, n.Y
	it.NodeID, it.Name, it.NodeType, it.X, it.Y = n.NodeID, n.Name, n.NodeType, &x, &y
	it.Ports = portNames(n.Ports)
}
