package gns3tools

import (
	"fmt"
	"strings"

	"agentchat/internal/gns3"
)

// maxListed bounds the names listed in a "not found" error.
const maxListed = 30

// nodeIndex is a project's nodes, read once per tool call, to resolve the
// model's node references.
type nodeIndex []gns3.Node

// resolve finds the node ref names: the node_id, else the exact name, else
// the one name equal to it case-insensitively. An unknown or ambiguous
// reference is an error naming the nodes it could be.
func (x nodeIndex) resolve(ref string) (*gns3.Node, error) {
	ref = strings.TrimSpace(ref)
	for i := range x {
		if x[i].NodeID == ref {
			return &x[i], nil
		}
	}
	var exact, folded []*gns3.Node
	for i := range x {
		switch {
		case x[i].Name == ref:
			exact = append(exact, &x[i])
		case strings.EqualFold(x[i].Name, ref):
			folded = append(folded, &x[i])
		}
	}
	if len(exact) == 1 {
		return exact[0], nil
	}
	if len(exact) == 0 && len(folded) == 1 {
		return folded[0], nil
	}
	if len(exact)+len(folded) > 1 {
		var names []string
		for _, n := range append(exact, folded...) {
			names = append(names, fmt.Sprintf("%s (%s)", n.Name, n.NodeID))
		}
		return nil, errorf("node '%s' is ambiguous: %s; use the node_id", ref, strings.Join(names, ", "))
	}
	if len(x) == 0 {
		return nil, errorf("node '%s' not found; the project has no nodes", ref)
	}
	names := make([]string, len(x))
	for i := range x {
		names[i] = x[i].Name
	}
	return nil, errorf("node '%s' not found; nodes: %s", ref, listNames(names))
}

// listNames joins names for an error, at most maxListed of them.
func listNames(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" ... (%d more)", len(names)-maxListed)
}
