package gns3tools

import (
	"strings"

	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// resolvePort finds the port of n that given names. A name or short name
// equal to given (ignoring case and spaces) wins. Otherwise given may
// abbreviate or spell out a port name: its letters and the port's letters
// must be a prefix one of the other and the rest (the numbers) equal, as
// "eth0" for Ethernet0, "g0/1" or "GigabitEthernet0/1" for Gi0/1, "fa0/0"
// for FastEthernet0/0; that is taken only when exactly one port matches.
// An unknown or ambiguous name is an error listing the node's ports.
func resolvePort(n *gns3.Node, given string) (gns3.Port, error) {
	g := squeeze(given)
	if len(n.Ports) == 0 {
		return gns3.Port{}, toolkit.Errorf("port '%s': %s has no network ports", given, n.Name)
	}
	for _, p := range n.Ports {
		if squeeze(p.Name) == g || (p.ShortName != "" && squeeze(p.ShortName) == g) {
			return p, nil
		}
	}
	gLetters, gRest := splitPortName(g)
	var hits []gns3.Port
	if gRest != "" {
		for _, p := range n.Ports {
			if abbreviates(gLetters, gRest, p.Name) || abbreviates(gLetters, gRest, p.ShortName) {
				hits = append(hits, p)
			}
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	if len(hits) > 1 {
		return gns3.Port{}, toolkit.Errorf("port '%s' is ambiguous on %s: %s", given, n.Name, toolkit.ListNames(portNames(hits)))
	}
	return gns3.Port{}, toolkit.Errorf("port '%s' not found on %s; ports: %s", given, n.Name, toolkit.ListNames(portNames(n.Ports)))
}

// abbreviates reports whether letters+rest (squeezed) names the port
// called name: same numbers, letters a prefix of the other's.
func abbreviates(letters, rest, name string) bool {
	if name == "" {
		return false
	}
	l, r := splitPortName(squeeze(name))
	return r == rest && (strings.HasPrefix(l, letters) || strings.HasPrefix(letters, l))
}

// splitPortName splits a squeezed port name into its leading letters and
// the rest ("gigabitethernet0/1" → "gigabitethernet", "0/1").
func splitPortName(s string) (letters, rest string) {
	i := 0
	for i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
		i++
	}
	return s[:i], s[i:]
}

// squeeze lowercases s and drops its white space ("Gi 0/1" → "gi0/1").
func squeeze(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), ""))
}

func portNames(ps []gns3.Port) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}
