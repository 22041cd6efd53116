package gns3topo

import "agentchat/internal/gns3"

// The parts of GNS3's nodes and links that a topology shows, read by
// Fetch: the rest of a node (its properties above all, most of its JSON)
// is skipped by the decoder rather than built and thrown away.

// listedNode is what Shape reads of a node.
type listedNode struct {
	NodeID      string       `json:"node_id"`
	Name        string       `json:"name"`
	NodeType    string       `json:"node_type"`
	Status      string       `json:"status"`
	Console     *int         `json:"console"`
	ConsoleType string       `json:"console_type"`
	Ports       []listedPort `json:"ports"`
}

// listedPort is what Shape reads of a port.
type listedPort struct {
	Name          string `json:"name"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	LinkType      string `json:"link_type"`
}

// listedLink is what Shape reads of a link.
type listedLink struct {
	LinkID   string         `json:"link_id"`
	LinkType string         `json:"link_type"`
	Suspend  bool           `json:"suspend"`
	Nodes    []gns3.LinkEnd `json:"nodes"`
}

// nodesOf returns listed as GNS3 nodes, with the fields Shape reads.
func nodesOf(listed []listedNode) []gns3.Node {
	out := make([]gns3.Node, len(listed))
	for i, n := range listed {
		ports := make([]gns3.Port, len(n.Ports))
		for j, p := range n.Ports {
			ports[j] = gns3.Port{Name: p.Name, AdapterNumber: p.AdapterNumber, PortNumber: p.PortNumber, LinkType: p.LinkType}
		}
		out[i] = gns3.Node{NodeID: n.NodeID, Name: n.Name, NodeType: n.NodeType, Status: n.Status,
			Console: n.Console, ConsoleType: n.ConsoleType, Ports: ports}
	}
	return out
}

// linksOf returns listed as GNS3 links, with the fields Shape reads.
func linksOf(listed []listedLink) []gns3.Link {
	out := make([]gns3.Link, len(listed))
	for i, l := range listed {
		out[i] = gns3.Link{LinkID: l.LinkID, LinkType: l.LinkType, Suspend: l.Suspend, Nodes: l.Nodes}
	}
	return out
}
