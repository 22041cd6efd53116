package gns3topo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"agentchat/internal/gns3"
)

// maxText bounds every free-text field (names, labels) in runes.
const maxText = 100

// Limits bound the size of the topology given to the model.
type Limits struct {
	// MaxNodes is how many nodes are listed (default DefaultMaxNodes).
	MaxNodes int
	// MaxLinks is how many links are listed (default DefaultMaxLinks).
	MaxLinks int
	// MaxPorts is how many ports of a node are listed (default
	// DefaultMaxPorts).
	MaxPorts int
}

func (l Limits) withDefaults() Limits {
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	if l.MaxLinks <= 0 {
		l.MaxLinks = DefaultMaxLinks
	}
	if l.MaxPorts <= 0 {
		l.MaxPorts = DefaultMaxPorts
	}
	return l
}

// Topology is the project topology as the model sees it. It holds no node
// properties, paths, hosts, MAC addresses or other settings that may carry
// secrets.
type Topology struct {
	ProjectID string `json:"project_id"`
	Nodes     []Node `json:"nodes"`
	Links     []Link `json:"links"`
	// Truncated says what was left out when the project is larger than
	// the limits; empty when everything is listed.
	Truncated string `json:"truncated,omitempty"`
}

// Node is a node of the topology.
type Node struct {
	NodeID      string `json:"node_id"`
	Name        string `json:"name"`
	NodeType    string `json:"node_type"`
	Status      string `json:"status"`
	ConsoleType string `json:"console_type,omitempty"`
	// Console is the console TCP port, nil when the node has none.
	Console *int   `json:"console,omitempty"`
	Ports   []Port `json:"ports"`
	// PortsOmitted counts the ports beyond the limit, not listed.
	PortsOmitted int `json:"ports_omitted,omitempty"`
}

// Port is a network port of a node.
type Port struct {
	Name          string `json:"name"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	LinkType      string `json:"link_type,omitempty"`
}

// Link is a link between node ports.
type Link struct {
	LinkID   string    `json:"link_id"`
	LinkType string    `json:"link_type,omitempty"`
	Suspend  bool      `json:"suspend"`
	Nodes    []LinkEnd `json:"nodes"`
}

// LinkEnd is one end of a link.
type LinkEnd struct {
	NodeID string `json:"node_id"`
	// NodeName is the name of the node, empty when the node is unknown.
	NodeName      string `json:"node_name"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	// PortName is the node's name of the port, or the link end's label
	// when the node does not list that port.
	PortName string `json:"port_name,omitempty"`
}

// Shape turns the controller's nodes and links into the compact topology,
// in the controller's order, within limits (zero fields: the defaults).
// Link ends are named from every node, listed or not.
func Shape(projectID string, nodes []gns3.Node, links []gns3.Link, limits Limits) Topology {
	limits = limits.withDefaults()
	byID := make(map[string]*gns3.Node, len(nodes))
	for i := range nodes {
		byID[nodes[i].NodeID] = &nodes[i]
	}
	t := Topology{ProjectID: projectID, Nodes: []Node{}, Links: []Link{}}
	portsCut := 0
	for i := range nodes[:min(len(nodes), limits.MaxNodes)] {
		n := shapeNode(&nodes[i], limits.MaxPorts)
		if n.PortsOmitted > 0 {
			portsCut++
		}
		t.Nodes = append(t.Nodes, n)
	}
	for _, l := range links[:min(len(links), limits.MaxLinks)] {
		t.Links = append(t.Links, shapeLink(l, byID))
	}
	var cut []string
	if len(nodes) > limits.MaxNodes {
		cut = append(cut, fmt.Sprintf("only the first %d of %d nodes are listed", limits.MaxNodes, len(nodes)))
	}
	if len(links) > limits.MaxLinks {
		cut = append(cut, fmt.Sprintf("only the first %d of %d links are listed", limits.MaxLinks, len(links)))
	}
	if portsCut > 0 {
		cut = append(cut, fmt.Sprintf("%d node(s) list only their first %d ports (see ports_omitted)", portsCut, limits.MaxPorts))
	}
	t.Truncated = strings.Join(cut, "; ")
	return t
}

func shapeNode(n *gns3.Node, maxPorts int) Node {
	out := Node{
		NodeID:      n.NodeID,
		Name:        trimText(n.Name, maxText),
		NodeType:    trimText(n.NodeType, maxText),
		Status:      trimText(n.Status, maxText),
		ConsoleType: trimText(n.ConsoleType, maxText),
		Ports:       make([]Port, 0, min(len(n.Ports), maxPorts)),
	}
	if n.Console != nil && out.ConsoleType != "none" {
		c := *n.Console
		out.Console = &c
	}
	for _, p := range n.Ports[:min(len(n.Ports), maxPorts)] {
		out.Ports = append(out.Ports, Port{
			Name:          trimText(p.Name, maxText),
			AdapterNumber: p.AdapterNumber,
			PortNumber:    p.PortNumber,
			LinkType:      trimText(p.LinkType, maxText),
		})
	}
	out.PortsOmitted = len(n.Ports) - len(out.Ports)
	return out
}

func shapeLink(l gns3.Link, byID map[string]*gns3.Node) Link {
	out := Link{LinkID: l.LinkID, LinkType: trimText(l.LinkType, maxText), Suspend: l.Suspend, Nodes: make([]LinkEnd, 0, len(l.Nodes))}
	// A link has two ends; anything more is malformed and not worth listing.
	for _, e := range l.Nodes[:min(len(l.Nodes), 2)] {
		end := LinkEnd{NodeID: e.NodeID, AdapterNumber: e.AdapterNumber, PortNumber: e.PortNumber}
		if n := byID[e.NodeID]; n != nil {
			end.NodeName = trimText(n.Name, maxText)
			for _, p := range n.Ports {
				if p.AdapterNumber == e.AdapterNumber && p.PortNumber == e.PortNumber {
					end.PortName = trimText(p.Name, maxText)
					break
				}
			}
		}
		if end.PortName == "" && e.Label != nil {
			end.PortName = trimText(e.Label.Text, maxText)
		}
		out.Nodes = append(out.Nodes, end)
	}
	return out
}

// JSON returns the topology as compact JSON (HTML characters unescaped, so
// that names read as written).
func (t Topology) JSON() (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return "", fmt.Errorf("encode topology of project %s: %w", t.ProjectID, err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Section returns the system prompt section for t: a heading, a line on
// how to read it, and the JSON.
func Section(t Topology) string {
	js, err := t.JSON()
	if err != nil { // cannot happen with these plain types
		return unavailable("the topology could not be encoded")
	}
	intro := "The nodes and links of the user's GNS3 project, read at the start of this turn, as JSON. " +
		"Link ends name the node and port they connect. Statuses may change during the turn."
	if t.Truncated != "" {
		intro += " The project is large: " + t.Truncated + "."
	}
	return Heading + "\n" + intro + "\n" + js
}
