package gns3tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// createLinkArgs are the arguments of create_gns3_link.
type createLinkArgs struct {
	Links []newLink `json:"links" jsonschema:"The links to create (1 to 50)."`
}

// newLink is one link to create, between two node ports.
type newLink struct {
	NodeA string `json:"node_a" jsonschema:"First node: its name or node_id."`
	PortA string `json:"port_a" jsonschema:"Port of the first node, by its name as listed in the node's ports (Ethernet0/0, e0/0, eth0, Gi0/1, ...)."`
	NodeB string `json:"node_b" jsonschema:"Second node: its name or node_id."`
	PortB string `json:"port_b" jsonschema:"Port of the second node, by its name as listed in the node's ports."`
}

// createdLink is the result of one new link; the names are GNS3's once
// resolved, else as given.
type createdLink struct {
	NodeA  string `json:"node_a"`
	PortA  string `json:"port_a"`
	NodeB  string `json:"node_b"`
	PortB  string `json:"port_b"`
	LinkID string `json:"link_id,omitempty"`
	toolkit.Outcome
}

func createLinkSpec() *spec {
	sp := toolkit.Define(ToolCreateLink,
		"Connect node ports with links (1 to 50 per call). Name each node by its name or node_id and each port by its name "+
			"as listed in the node's ports (for example Ethernet0/0, e0/0, eth0, Gi0/1). A port can carry one link only.",
		func(s *jsonschema.Schema) {
			toolkit.NonEmpty(toolkit.Array(s, "links", 1, maxLinks).Items, "node_a", "port_a", "node_b", "port_b")
		}, createLinks)
	sp.SideEffects, sp.Tier = true, agent.TierBuild
	return sp
}

// linkPort is a port of a node, as GNS3 numbers it.
type linkPort struct {
	nodeID           string
	adapter, portNum int
}

func createLinks(ctx context.Context, c *call, a createLinkArgs) toolkit.Report[createdLink] {
	items := make([]createdLink, len(a.Links))
	for i, l := range a.Links {
		items[i] = createdLink{NodeA: l.NodeA, PortA: l.PortA, NodeB: l.NodeB, PortB: l.PortB}
	}
	var (
		nodes    toolkit.Nodes
		existing []gns3.Link
		err      error
		wg       sync.WaitGroup
	)
	wg.Go(func() { nodes, err = c.nodes(ctx) })
	wg.Go(func() { existing = c.linksForHints(ctx) })
	wg.Wait()
	if err != nil {
		return toolkit.FailAll(items, "cannot read the project's nodes: "+toolkit.Describe(err))
	}
	ends := make([][2]gns3.LinkEnd, len(items))
	ready := make([]bool, len(items))
	usedBy := map[linkPort]int{} // a port asked for twice in this call: the first link gets it
	for i, l := range a.Links {
		ea, err := resolveEnd(nodes, l.NodeA, l.PortA, &items[i].NodeA, &items[i].PortA)
		if err != nil {
			items[i].FailErr(err)
			continue
		}
		eb, err := resolveEnd(nodes, l.NodeB, l.PortB, &items[i].NodeB, &items[i].PortB)
		if err != nil {
			items[i].FailErr(err)
			continue
		}
		pa, pb := linkPort{ea.NodeID, ea.AdapterNumber, ea.PortNumber}, linkPort{eb.NodeID, eb.AdapterNumber, eb.PortNumber}
		if pa == pb {
			items[i].Fail(fmt.Sprintf("a link needs two different ports; both ends are %s %s", items[i].NodeA, items[i].PortA))
			continue
		}
		if j, ok := usedBy[pa]; ok {
			items[i].Fail(fmt.Sprintf("port %s of %s is already used by link %d of this call", items[i].PortA, items[i].NodeA, j+1))
			continue
		}
		if j, ok := usedBy[pb]; ok {
			items[i].Fail(fmt.Sprintf("port %s of %s is already used by link %d of this call", items[i].PortB, items[i].NodeB, j+1))
			continue
		}
		usedBy[pa], usedBy[pb] = i, i
		ends[i], ready[i] = [2]gns3.LinkEnd{ea, eb}, true
	}
	toolkit.ForEach(len(items), func(i int) {
		if !ready[i] {
			return
		}
		var link *gns3.Link
		err := c.limit(ctx, func() (err error) {
			link, err = c.client.CreateLink(ctx, c.Token, c.ProjectID, ends[i][0], ends[i][1])
			return err
		})
		if err != nil {
			items[i].Fail(toolkit.Describe(err) + occupiedHint(err, nodes, existing, ends[i]))
			return
		}
		items[i].LinkID = link.LinkID
		items[i].Succeed()
	})
	return toolkit.Finish(items)
}

// resolveEnd finds a link end from a node and a port reference, and
// writes the names GNS3 knows them by into nodeName and portName.
func resolveEnd(nodes toolkit.Nodes, nodeRef, portRef string, nodeName, portName *string) (gns3.LinkEnd, error) {
	n, err := nodes.Resolve(nodeRef)
	if err != nil {
		return gns3.LinkEnd{}, err
	}
	*nodeName = n.Name
	p, err := resolvePort(n, portRef)
	if err != nil {
		return gns3.LinkEnd{}, err
	}
	*portName = p.Name
	return gns3.LinkEnd{NodeID: n.NodeID, AdapterNumber: p.AdapterNumber, PortNumber: p.PortNumber}, nil
}

// linksForHints reads the project's links to explain a refused link; they
// are not needed otherwise, so a failure only leaves the hint out.
func (c *call) linksForHints(ctx context.Context) []gns3.Link {
	var links []gns3.Link
	_ = c.limit(ctx, func() (err error) {
		links, err = c.client.GetLinks(ctx, c.Token, c.ProjectID)
		return err
	})
	return links
}

// occupiedHint tells, after GNS3 refused a link with 409, which of its
// ports already carry a link, and to what: " (PC1 Ethernet0 is linked to
// Switch1 Ethernet0 by link <id>)".
func occupiedHint(err error, nodes toolkit.Nodes, links []gns3.Link, ends [2]gns3.LinkEnd) string {
	var se *gns3.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusConflict {
		return ""
	}
	var hints []string
	for _, want := range ends {
		for _, l := range links {
			if len(l.Nodes) != 2 {
				continue
			}
			for k, e := range l.Nodes {
				if e.NodeID == want.NodeID && e.AdapterNumber == want.AdapterNumber && e.PortNumber == want.PortNumber {
					other := l.Nodes[1-k]
					hints = append(hints, fmt.Sprintf("%s is linked to %s by link %s", endName(nodes, e), endName(nodes, other), l.LinkID))
				}
			}
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return " (" + strings.Join(hints, "; ") + ")"
}

// endName names a link end "<node> <port>" as GNS3 lists them.
func endName(nodes toolkit.Nodes, e gns3.LinkEnd) string {
	for i := range nodes {
		if nodes[i].NodeID != e.NodeID {
			continue
		}
		for _, p := range nodes[i].Ports {
			if p.AdapterNumber == e.AdapterNumber && p.PortNumber == e.PortNumber {
				return nodes[i].Name + " " + p.Name
			}
		}
		return fmt.Sprintf("%s port %d/%d", nodes[i].Name, e.AdapterNumber, e.PortNumber)
	}
	return fmt.Sprintf("node %s port %d/%d", e.NodeID, e.AdapterNumber, e.PortNumber)
}
