package pcapsum_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agentchat/internal/pcapsum"
	"agentchat/internal/pcapsum/pcaptest"
)

func read(t *testing.T, c *pcaptest.Capture, o pcapsum.Options) pcapsum.Summary {
	t.Helper()
	s, err := pcapsum.Read(context.Background(), c.Reader(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hasFinding(s pcapsum.Summary, parts ...string) bool {
	return slices.ContainsFunc(s.Findings, func(f string) bool {
		for _, p := range parts {
			if !strings.Contains(f, p) {
				return false
			}
		}
		return true
	})
}

// TestFaultCapture is the acceptance: a capture holding an OSPF
// hello-interval mismatch and an unanswered ARP reports both.
func TestFaultCapture(t *testing.T) {
	s := read(t, pcaptest.FaultCapture(), pcapsum.Options{})
	if s.Packets != 17 || s.Scanned != 17 || s.Stopped != pcapsum.StopEnd || s.LinkType != "Ethernet" || s.Malformed != 0 {
		t.Fatalf("counts %+v", s)
	}
	for _, want := range [][]string{
		{"OSPF hello-interval mismatch", "1.1.1.1 (10.0.12.1) 10s", "2.2.2.2 (10.0.12.2) 5s", "cannot become neighbours"},
		{"OSPF dead-interval mismatch", "40s", "20s"},
		{"OSPF MTU mismatch", "mtu 1500", "mtu 1400", "EXSTART"},
		{"ARP: 10.0.12.10 asked for 10.0.12.99 3 time(s) without a reply"},
		{"ICMP: 2 echo request(s) from 10.0.12.10 to 10.0.12.2 without a reply"},
		{"TCP: 1 reset(s) 10.0.12.1:179 > 10.0.12.2:40000"},
		{"BGP NOTIFICATION from 10.0.12.2 to 10.0.12.1: OPEN message error: bad peer AS (code 2/2)"},
	} {
		if !hasFinding(s, want...) {
			t.Errorf("no finding with %q in\n%s", want, strings.Join(s.Findings, "\n"))
		}
	}
	if hasFinding(s, "asked for 10.0.12.1 ") || hasFinding(s, "to 10.0.12.1 without") {
		t.Errorf("an answered request reported:\n%s", strings.Join(s.Findings, "\n"))
	}
	if s.OSPF == nil || len(s.OSPF.Routers) != 2 || s.OSPF.Routers[0].HelloInterval != 10 || s.OSPF.Routers[1].HelloInterval != 5 ||
		s.OSPF.Routers[0].MTU != 1500 || s.OSPF.Routers[1].Hellos != 2 || s.OSPF.Routers[0].NetworkMask != "255.255.255.0" || s.OSPF.Routers[0].Area != "0.0.0.0" {
		t.Errorf("ospf %+v", s.OSPF)
	}
	if s.ARP == nil || s.ARP.Requests != 4 || s.ARP.Replies != 1 || len(s.ARP.Unanswered) != 1 {
		t.Errorf("arp %+v", s.ARP)
	}
	if s.ICMP == nil || s.ICMP.EchoRequests != 3 || s.ICMP.EchoReplies != 1 {
		t.Errorf("icmp %+v", s.ICMP)
	}
	if s.Protocols["ospf"] != 5 || s.Protocols["arp"] != 5 || s.Protocols["bgp"] != 3 || s.Protocols["ipv4"] != 12 {
		t.Errorf("protocols %v", s.Protocols)
	}
	if len(s.FirstPackets) != 17 || !strings.HasPrefix(s.FirstPackets[0], "0.000 10.0.12.1 > 224.0.0.5 OSPF hello router 1.1.1.1 area 0.0.0.0 hello 10s dead 40s") ||
		s.FirstPackets[2] != "0.020 ARP who-has 10.0.12.99 tell 10.0.12.10" {
		t.Errorf("lines %q", s.FirstPackets)
	}
	if s.Conversations[0].Packets < 2 || s.ConversationsTotal < 8 {
		t.Errorf("conversations %+v (%d)", s.Conversations, s.ConversationsTotal)
	}
}

func TestLayer2Protocols(t *testing.T) {
	sw1, sw2 := pcaptest.MAC(0x21), pcaptest.MAC(0x22)
	c := pcaptest.New().
		Add(pcaptest.STPConfig(sw1, 32769, sw1, 0, 32769, 1, 3)).
		Add(pcaptest.STPConfig(sw2, 32769, sw2, 0, 32769, 2, 0)).
		Add(pcaptest.CDP(sw1, "SW1.lab", "GigabitEthernet0/1", "cisco IOSv", 1)).
		Add(pcaptest.CDP(sw2, "SW2\x1b[31m.lab"+strings.Repeat("x", 100), "GigabitEthernet0/2", "cisco IOSv", 10)).
		Add(pcaptest.LLDP(sw2, "eth1", "frr2"))
	s := read(t, c, pcapsum.Options{})
	if s.STP == nil || s.STP.BPDUs != 2 || len(s.STP.Bridges) != 2 || s.STP.Bridges[0].Role != "designated" || s.STP.Bridges[0].Protocol != "rstp" ||
		s.STP.Bridges[1].Protocol != "stp" || s.STP.Bridges[0].RootID != "32769.0c:00:00:00:00:21" {
		t.Errorf("stp %+v", s.STP)
	}
	if !hasFinding(s, "STP: BPDUs name different root bridges", "32769.0c:00:00:00:00:21", "32769.0c:00:00:00:00:22") {
		t.Errorf("findings %q", s.Findings)
	}
	if len(s.CDP) != 2 || s.CDP[0].DeviceID != "SW1.lab" || s.CDP[0].PortID != "GigabitEthernet0/1" || s.CDP[0].NativeVLAN != 1 {
		t.Errorf("cdp %+v", s.CDP)
	}
	if id := s.CDP[1].DeviceID; strings.ContainsAny(id, "\x1b") || len(id) > 70 || !strings.HasPrefix(id, "SW2?[31m.lab") {
		t.Errorf("device text not cleaned: %q", id)
	}
	if !hasFinding(s, "CDP native VLAN mismatch", "native VLAN 1", "native VLAN 10") {
		t.Errorf("findings %q", s.Findings)
	}
	if len(s.LLDP) != 1 || s.LLDP[0].DeviceID != "frr2" || s.LLDP[0].PortID != "eth1" {
		t.Errorf("lldp %+v", s.LLDP)
	}
}

func TestFilterKeeps(t *testing.T) {
	tests := []struct {
		filter string
		want   int
	}{
		{"", 17},
		{"ospf", 5},
		{"arp", 5},
		{"arp or icmp", 9},
		{"icmp and host 10.0.12.2", 2},
		{"tcp port 179", 3},
		{"bgp", 3},
		{"not arp and not ospf", 7},
		{"host 10.0.12.99", 3},
		{"0c:00:00:00:00:01", 8},
		{"udp", 0},
	}
	for _, tt := range tests {
		f, err := pcapsum.ParseFilter(tt.filter)
		if err != nil {
			t.Fatalf("%q: %v", tt.filter, err)
		}
		s := read(t, pcaptest.FaultCapture(), pcapsum.Options{Filter: f})
		if s.Packets != tt.want || s.Scanned != 17 || s.Filter != tt.filter {
			t.Errorf("%q kept %d of %d, want %d", tt.filter, s.Packets, s.Scanned, tt.want)
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	for in, want := range map[string]string{
		"ospff":                    `unknown word "ospff"`,
		"port":                     `"port" needs a port number`,
		"port 70000":               "from 0 to 65535",
		"host nope":                "not an IP or MAC address",
		"or arp":                   `"or" needs a condition`,
		"arp and":                  `"and" needs a condition`,
		"not":                      `"not" needs a condition`,
		"vlan 5000":                "from 0 to 4095",
		"arp\nicmp":                "printable ASCII",
		"tcp; rm -rf":              `unknown word "tcp;"`,
		strings.Repeat("arp ", 60): "longer than 200",
		strings.Repeat("arp ", 17): "more than 16 conditions",
		"icmp or":                  `"or" needs a condition`,
		"ip and and tcp":           `"and" needs a condition`,
	} {
		if _, err := pcapsum.ParseFilter(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFilter(%q) = %v, want %q", in, err, want)
		}
	}
	if f, err := pcapsum.ParseFilter("  "); f != nil || err != nil {
		t.Errorf("blank: %v, %v", f, err)
	}
}

// TestSummaryStaysCompact: a capture with thousands of hosts, ARP
// targets and pings gives a bounded summary.
func TestSummaryStaysCompact(t *testing.T) {
	c := pcaptest.New()
	for i := range 3000 {
		a, b := byte(i%250+1), byte(i/250+1)
		host := "10.1." + itoa(b) + "." + itoa(a)
		c.Add(pcaptest.ARP(false, pcaptest.MAC(a), host, "10.2."+itoa(b)+"."+itoa(a), nil))
		c.Add(pcaptest.ICMPEcho(false, pcaptest.MAC(a), pcaptest.MAC(1), host, "10.3.0.1", uint16(i), 1))
	}
	s := read(t, c, pcapsum.Options{MaxPackets: 5000})
	out, _ := json.Marshal(s)
	if s.Packets != 5000 || s.Stopped != pcapsum.StopMaxPackets || len(out) > 16<<10 || len(s.Findings) > 21 {
		t.Errorf("packets %d stopped %s: %d bytes, %d findings", s.Packets, s.Stopped, len(out), len(s.Findings))
	}
}

func itoa(b byte) string { return strconv.Itoa(int(b)) }
