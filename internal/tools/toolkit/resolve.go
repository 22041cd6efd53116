package toolkit

import (
	"fmt"
	"strings"

	"agentchat/internal/gns3"
)

// maxListed bounds the names listed in a "not found" error.
const maxListed = 30

// Kind names what a reference picks, in the texts of its errors:
// "<Noun> 'x' is ambiguous: ...; use the <IDField>", "<Noun> 'x' not
// found; <Plural>: a, b, ..." and "<Noun> 'x' not found; <None>".
type Kind struct {
	// Noun is what is asked for: "node".
	Noun string
	// IDField is its id, the way out of an ambiguity: "node_id".
	IDField string
	// Plural is what the candidates are called: "nodes".
	Plural string
	// None says why there is no candidate at all.
	None string
}

// Kinds of references.
var (
	// NodeKind is a node of the project.
	NodeKind = Kind{Noun: "node", IDField: "node_id", Plural: "nodes", None: "the project has no nodes"}
	// DeviceKind is a node of the project the console tools type into.
	DeviceKind = Kind{Noun: "device", IDField: "node_id", Plural: "nodes", None: "the project has no nodes"}
	// TemplateKind is a GNS3 template.
	TemplateKind = Kind{Noun: "template", IDField: "template_id", Plural: "templates", None: "no templates are available"}
)

// Resolve finds the item ref names among items: the one whose id is ref,
// else the one whose name is ref, else the one whose name equals it
// ignoring case (ref trimmed of spaces). An unknown or ambiguous
// reference is an Error naming what it could be.
func Resolve[T any](items []T, k Kind, id, name func(*T) string, ref string) (*T, error) {
	ref = strings.TrimSpace(ref)
	var exact, folded []*T
	for i := range items {
		it := &items[i]
		switch {
		case id(it) == ref:
			return it, nil
		case name(it) == ref:
			exact = append(exact, it)
		case strings.EqualFold(name(it), ref):
			folded = append(folded, it)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) == 0 && len(folded) == 1:
		return folded[0], nil
	case len(exact)+len(folded) > 1:
		var names []string
		for _, it := range append(exact, folded...) {
			names = append(names, fmt.Sprintf("%s (%s)", name(it), id(it)))
		}
		return nil, Errorf("%s '%s' is ambiguous: %s; use the %s", k.Noun, ref, strings.Join(names, ", "), k.IDField)
	case len(items) == 0:
		return nil, Errorf("%s '%s' not found; %s", k.Noun, ref, k.None)
	}
	names := make([]string, len(items))
	for i := range items {
		names[i] = name(&items[i])
	}
	return nil, Errorf("%s '%s' not found; %s: %s", k.Noun, ref, k.Plural, ListNames(names))
}

// Nodes are a project's nodes, read once per tool call, to resolve the
// model's references to them.
type Nodes []gns3.Node

// Resolve finds the node ref names: by node_id, exact name or the one
// name equal to it ignoring case (see Resolve), with NodeKind errors.
func (ns Nodes) Resolve(ref string) (*gns3.Node, error) { return ns.ResolveAs(NodeKind, ref) }

// ResolveAs is Resolve with the errors of kind k.
func (ns Nodes) ResolveAs(k Kind, ref string) (*gns3.Node, error) {
	return Resolve(ns, k, func(n *gns3.Node) string { return n.NodeID }, func(n *gns3.Node) string { return n.Name }, ref)
}

// ListNames joins names for an error, at most 30 of them, then how many
// more there are.
func ListNames(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" ... (%d more)", len(names)-maxListed)
}
