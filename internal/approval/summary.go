package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSummary is the longest summary, in runes (an ellipsis ends a cut one).
const MaxSummary = 300

// Tool names the summaries know (those of packages gns3tools and
// consoletools; a test checks that they still exist).
const (
	toolConfigCommands = "execute_multiple_device_config_commands"
	toolShowCommands   = "execute_multiple_device_commands"
	toolVPCSCommands   = "execute_vpcs_commands"
	toolCreateNode     = "create_gns3_node"
	toolCreateLink     = "create_gns3_link"
	toolStartNode      = "start_gns3_node"
	toolStopNode       = "stop_gns3_node"
	toolSuspendNode    = "suspend_gns3_node"
	toolRenameNode     = "update_gns3_node_name"
	toolDeleteNode     = "delete_gns3_node"
	toolDeleteLink     = "delete_gns3_link"
	toolLinkConditions = "manage_gns3_link_conditions"
)

// Argument shapes of the summarised tools (their JSON schemas).
type (
	deviceCommands struct {
		DeviceConfigs []struct {
			DeviceName     string   `json:"device_name"`
			Commands       []string `json:"commands"`
			ConfigCommands []string `json:"config_commands"`
		} `json:"device_configs"`
	}
	nodeRefs struct {
		Nodes []string `json:"nodes"`
	}
	newNodes struct {
		Nodes []struct {
			Template string `json:"template"`
			Name     string `json:"name"`
		} `json:"nodes"`
	}
	newLinks struct {
		Links []struct {
			NodeA string `json:"node_a"`
			PortA string `json:"port_a"`
			NodeB string `json:"node_b"`
			PortB string `json:"port_b"`
		} `json:"links"`
	}
	renames struct {
		Nodes []struct {
			Node    string `json:"node"`
			NewName string `json:"new_name"`
		} `json:"nodes"`
	}
	linkRefs struct {
		Links []string `json:"links"`
	}
	linkConditions struct {
		Action     string         `json:"action"`
		Link       string         `json:"link"`
		Conditions map[string]any `json:"conditions"`
	}
)

// Summary is a one-line, readable description of a call of tool with the
// model's JSON arguments, such as
// "configure R1: `interface e0/0`, `ip address 10.0.0.1 255.255.255.0`".
// It has no control characters and at most MaxSummary runes. Arguments
// that do not decode are summarised as the tool's name and their compact
// text.
func Summary(tool string, args string) string {
	s, ok := summarize(tool, []byte(args))
	if !ok {
		s = tool + " " + compact(args)
	}
	return clean(s)
}

// summarize describes the known tools; ok is false for any other tool or
// arguments of another shape.
func summarize(tool string, raw []byte) (string, bool) {
	switch tool {
	case toolConfigCommands, toolShowCommands, toolVPCSCommands:
		var a deviceCommands
		if json.Unmarshal(raw, &a) != nil || len(a.DeviceConfigs) == 0 {
			return "", false
		}
		verb := map[string]string{toolConfigCommands: "configure", toolShowCommands: "show on", toolVPCSCommands: "run on"}[tool]
		parts := make([]string, 0, len(a.DeviceConfigs))
		for _, d := range a.DeviceConfigs {
			cmds := d.Commands
			if tool == toolConfigCommands {
				cmds = d.ConfigCommands
			}
			quoted := make([]string, len(cmds))
			for i, c := range cmds {
				quoted[i] = "`" + c + "`"
			}
			parts = append(parts, d.DeviceName+": "+strings.Join(quoted, ", "))
		}
		return verb + " " + strings.Join(parts, "; "), true
	case toolStartNode, toolStopNode, toolSuspendNode, toolDeleteNode:
		var a nodeRefs
		if json.Unmarshal(raw, &a) != nil || len(a.Nodes) == 0 {
			return "", false
		}
		verb := map[string]string{toolStartNode: "start", toolStopNode: "stop", toolSuspendNode: "suspend", toolDeleteNode: "delete"}[tool]
		return verb + " " + strings.Join(a.Nodes, ", "), true
	case toolCreateNode:
		var a newNodes
		if json.Unmarshal(raw, &a) != nil || len(a.Nodes) == 0 {
			return "", false
		}
		parts := make([]string, len(a.Nodes))
		for i, n := range a.Nodes {
			parts[i] = n.Template
			if n.Name != "" {
				parts[i] = n.Name + " (" + n.Template + ")"
			}
		}
		return "create " + strings.Join(parts, ", "), true
	case toolCreateLink:
		var a newLinks
		if json.Unmarshal(raw, &a) != nil || len(a.Links) == 0 {
			return "", false
		}
		parts := make([]string, len(a.Links))
		for i, l := range a.Links {
			parts[i] = fmt.Sprintf("%s %s <-> %s %s", l.NodeA, l.PortA, l.NodeB, l.PortB)
		}
		return "link " + strings.Join(parts, ", "), true
	case toolRenameNode:
		var a renames
		if json.Unmarshal(raw, &a) != nil || len(a.Nodes) == 0 {
			return "", false
		}
		parts := make([]string, len(a.Nodes))
		for i, n := range a.Nodes {
			parts[i] = n.Node + " to " + n.NewName
		}
		return "rename " + strings.Join(parts, ", "), true
	case toolDeleteLink:
		var a linkRefs
		if json.Unmarshal(raw, &a) != nil || len(a.Links) == 0 {
			return "", false
		}
		return "delete link " + strings.Join(a.Links, ", "), true
	case toolLinkConditions:
		var a linkConditions
		if json.Unmarshal(raw, &a) != nil || a.Action == "" {
			return "", false
		}
		s := a.Action + " link conditions of " + a.Link
		if a.Action == "set" && len(a.Conditions) > 0 {
			s += ": " + compact(mustJSON(a.Conditions))
		}
		return s, true
	}
	return "", false
}

// mustJSON is v as JSON (maps sort their keys), "" on failure.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// compact is JSON text without insignificant spaces, or s as it is when
// it is not JSON.
func compact(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	return mustJSON(v)
}

// clean replaces control and format characters (newlines, escapes,
// bidirectional overrides) with spaces, collapses runs of spaces, and cuts
// s to MaxSummary runes.
func clean(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return truncate(strings.TrimSpace(b.String()), MaxSummary)
}

// truncate cuts s to n runes, the last one an ellipsis when it was cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
