package gns3tools

import (
	"context"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// alwaysRunning are GNS3's built-in node types: always started, they
// cannot be stopped or suspended.
var alwaysRunning = map[string]bool{
	"cloud": true, "nat": true, "ethernet_switch": true, "ethernet_hub": true, "frame_relay_switch": true, "atm_switch": true,
}

// suspendable are the node types whose emulator can be suspended; GNS3
// accepts a suspend of any other node and does nothing.
var suspendable = map[string]bool{"qemu": true, "dynamips": true, "docker": true, "virtualbox": true, "vmware": true}

// nodeAction is one of start, stop and suspend: the GNS3 action and the
// status it leads to.
type nodeAction struct {
	tool        string
	action      string // gns3.NodeAction*
	target      string // gns3.Node* status
	verb        string // "start", for texts
	description string
	tier        agent.Tier
}

// nodeRefsArgs are the arguments of the tools that take a list of nodes.
type nodeRefsArgs struct {
	Nodes []string `json:"nodes" jsonschema:"The nodes, each by its name or node_id."`
}

// actedNode is the result of start, stop or suspend on one node.
type actedNode struct {
	Node     string `json:"node"`
	NodeID   string `json:"node_id,omitempty"`
	Name     string `json:"name,omitempty"`
	NodeType string `json:"node_type,omitempty"`
	// NodeStatus is the node's status when the tool ended.
	NodeStatus string `json:"node_status,omitempty"`
	Note       string `json:"note,omitempty"`
	toolkit.Outcome
}

// actionSpec makes the tool of a; timeout is its agent.Tool.Timeout,
// long enough for the slowest boot it waits for.
func actionSpec(a nodeAction, timeout time.Duration) *spec {
	sp := toolkit.Define(a.tool, a.description, func(s *jsonschema.Schema) {
		p := toolkit.Array(s, "nodes", 1, maxNodeRefs)
		p.UniqueItems = true
		p.Description = "The nodes to " + a.verb + ", each by its name or node_id (1 to 50)."
		p.Items.MinLength = jsonschema.Ptr(1)
	}, func(ctx context.Context, c *call, args nodeRefsArgs) toolkit.Report[actedNode] {
		return c.actOnNodes(ctx, a, args.Nodes)
	})
	sp.SideEffects, sp.Timeout, sp.Tier = true, timeout, a.tier
	return sp
}

// actOnNodes runs a on every node, in parallel, each waiting for its own
// status.
func (c *call) actOnNodes(ctx context.Context, a nodeAction, refs []string) toolkit.Report[actedNode] {
	items := make([]actedNode, len(refs))
	for i, r := range refs {
		items[i].Node = r
	}
	nodes, err := c.nodes(ctx)
	if err != nil {
		return toolkit.FailAll(items, "cannot read the project's nodes: "+toolkit.Describe(err))
	}
	targets := make([]*gns3.Node, len(items))
	first := map[string]int{} // node_id → the item that acts on it
	for i, r := range refs {
		n, err := nodes.Resolve(r)
		if err != nil {
			items[i].FailErr(err)
			continue
		}
		items[i].NodeID, items[i].Name, items[i].NodeType, items[i].NodeStatus = n.NodeID, n.Name, n.NodeType, n.Status
		if _, dup := first[n.NodeID]; !dup {
			first[n.NodeID] = i
			targets[i] = n
		}
	}
	toolkit.ForEach(len(items), func(i int) {
		if targets[i] != nil {
			c.act(ctx, a, targets[i], &items[i])
		}
	})
	for i := range items {
		if j, ok := first[items[i].NodeID]; ok && j != i && !items[i].Done() {
			items[i].NodeStatus, items[i].Note, items[i].Outcome = items[j].NodeStatus, "same node as item "+strconv.Itoa(j+1), items[j].Outcome
		}
	}
	return toolkit.Finish(items)
}

// act asks GNS3 for a on n and waits until n has the status it leads to.
// A node already in that status is left alone.
func (c *call) act(ctx context.Context, a nodeAction, n *gns3.Node, it *actedNode) {
	if n.Status == a.target {
		it.Note = "already " + a.target + "; nothing done"
		it.Succeed()
		return
	}
	if alwaysRunning[n.NodeType] {
		it.Fail(n.Name + " is a built-in " + n.NodeType + ", always running: it cannot be " + a.target)
		return
	}
	if a.action == gns3.NodeActionSuspend {
		if !suspendable[n.NodeType] {
			it.Fail(n.Name + " is a " + n.NodeType + " node, which GNS3 cannot suspend; stop it instead")
			return
		}
		if n.Status != gns3.NodeStarted {
			it.Fail(n.Name + " is " + statusText(n.Status) + "; only a started node can be suspended")
			return
		}
	}
	err := c.limit(ctx, func() error {
		return c.client.NodeAction(ctx, c.Token, c.ProjectID, n.NodeID, a.action)
	})
	if err != nil {
		it.Fail("cannot " + a.verb + " " + n.Name + ": " + toolkit.Describe(err))
		return
	}
	status, err := c.waitStatus(ctx, n, a.target, c.waitTimeout(n.NodeType))
	it.NodeStatus = status
	if err != nil {
		it.FailErr(err)
		return
	}
	it.Succeed()
}
