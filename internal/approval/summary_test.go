package approval

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{toolConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":["interface e0/0","ip address 10.0.0.1 255.255.255.0"]}]}`,
			"configure R1: `interface e0/0`, `ip address 10.0.0.1 255.255.255.0`"},
		{toolConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":["no shut"]},{"device_name":"R2","config_commands":["hostname B"]}]}`,
			"configure R1: `no shut`; R2: `hostname B`"},
		{toolVPCSCommands, `{"device_configs":[{"device_name":"PC1","commands":["ip 10.0.0.2/24 10.0.0.1"]}]}`,
			"run on PC1: `ip 10.0.0.2/24 10.0.0.1`"},
		{toolShowCommands, `{"device_configs":[{"device_name":"R1","commands":["show ip int brief"]}]}`,
			"show on R1: `show ip int brief`"},
		{toolStartNode, `{"nodes":["R1","R2"]}`, "start R1, R2"},
		{toolStopNode, `{"nodes":["R1"]}`, "stop R1"},
		{toolSuspendNode, `{"nodes":["R1"]}`, "suspend R1"},
		{toolDeleteNode, `{"nodes":["PC1"]}`, "delete PC1"},
		{toolCreateNode, `{"nodes":[{"template":"c7200","name":"R3"},{"template":"VPCS"}]}`, "create R3 (c7200), VPCS"},
		{toolCreateLink, `{"links":[{"node_a":"R1","port_a":"e0/0","node_b":"R2","port_b":"e0/1"}]}`, "link R1 e0/0 <-> R2 e0/1"},
		{toolRenameNode, `{"nodes":[{"node":"R1","new_name":"Core1"}]}`, "rename R1 to Core1"},
		{toolDeleteLink, `{"links":["l-1","l-2"]}`, "delete link l-1, l-2"},
		{toolLinkConditions, `{"action":"set","link":"R1:e0/0","conditions":{"packet_loss":10}}`, `set link conditions of R1:e0/0: {"packet_loss":10}`},
		{toolLinkConditions, `{"action":"clear","link":"l-1"}`, "clear link conditions of l-1"},
		{"some_tool", `{ "a" : 1 }`, `some_tool {"a":1}`},
		{toolStartNode, `not json`, "start_gns3_node not json"},
		{toolStartNode, `{"nodes":[]}`, "start_gns3_node {\"nodes\":[]}"},
	}
	for _, tt := range tests {
		if got := Summary(tt.tool, tt.args); got != tt.want {
			t.Errorf("Summary(%s, %s) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}

// TestSummaryIsOneBoundedLine feeds the model's worst: newlines, terminal
// escapes, bidirectional overrides and a huge command; the summary stays
// one short line of printable text.
func TestSummaryIsOneBoundedLine(t *testing.T) {
	attacks := []struct{ tool, args string }{
		{toolConfigCommands, `{"device_configs":[{"device_name":"R1\n\u001b[2J","config_commands":["hostname X\r\nreload","\u202eevil"]}]}`},
		{toolConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":["` + strings.Repeat("a", 5000) + `"]}]}`},
		{"unknown", strings.Repeat("é\n", 3000)},
		{toolStartNode, "\xff\xfe{\"nodes\":[\"R1\"]}"},
	}
	for _, a := range attacks {
		got := Summary(a.tool, a.args)
		if n := utf8.RuneCountInString(got); n > MaxSummary {
			t.Errorf("summary of %.40q has %d runes, want at most %d", a.args, n, MaxSummary)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
				t.Errorf("summary %q holds the control or format character %U", got, r)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("summary %q is not valid UTF-8", got)
		}
	}
}
