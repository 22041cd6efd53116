package gns3tools

import (
	"fmt"
	"strings"
	"testing"

	"agentchat/internal/gns3"
)

func port(name, short string, adapter, num int) gns3.Port {
	return gns3.Port{Name: name, ShortName: short, AdapterNumber: adapter, PortNumber: num, LinkType: "ethernet"}
}

// Nodes with the ports GNS3 lists for common node types.
func vpcsPorts() gns3.Node {
	return gns3.Node{Name: "PC1", Ports: []gns3.Port{port("Ethernet0", "e0", 0, 0)}}
}

func iouPorts() gns3.Node {
	n := gns3.Node{Name: "R1"}
	for a := 0; a < 2; a++ {
		for p := 0; p < 4; p++ {
			n.Ports = append(n.Ports, port(fmt.Sprintf("Ethernet%d/%d", a, p), fmt.Sprintf("e%d/%d", a, p), a, p))
		}
	}
	for p := 0; p < 4; p++ {
		n.Ports = append(n.Ports, port(fmt.Sprintf("Serial2/%d", p), fmt.Sprintf("s2/%d", p), 2, p))
	}
	return n
}

func iosvPorts() gns3.Node {
	n := gns3.Node{Name: "R2"}
	for a := 0; a < 4; a++ {
		n.Ports = append(n.Ports, port(fmt.Sprintf("Gi0/%d", a), fmt.Sprintf("gi0/%d", a), a, 0))
	}
	return n
}

func c7200Ports() gns3.Node {
	n := gns3.Node{Name: "R3", Ports: []gns3.Port{port("FastEthernet0/0", "f0/0", 0, 0)}}
	for p := 0; p < 8; p++ {
		n.Ports = append(n.Ports, port(fmt.Sprintf("Ethernet1/%d", p), fmt.Sprintf("e1/%d", p), 1, p))
	}
	return n
}

func dockerPorts() gns3.Node {
	n := gns3.Node{Name: "alpine-1"}
	for a := 0; a < 4; a++ {
		n.Ports = append(n.Ports, port(fmt.Sprintf("eth%d", a), fmt.Sprintf("eth%d", a), a, 0))
	}
	return n
}

func switchPorts() gns3.Node {
	n := gns3.Node{Name: "Switch1"}
	for p := 0; p < 8; p++ {
		n.Ports = append(n.Ports, port(fmt.Sprintf("Ethernet%d", p), fmt.Sprintf("e%d", p), 0, p))
	}
	return n
}

func TestResolvePort(t *testing.T) {
	mixed := gns3.Node{Name: "X", Ports: []gns3.Port{port("Ethernet0/0", "e0/0", 0, 0), port("Serial0/0", "s0/0", 1, 0)}}
	twoEth := gns3.Node{Name: "Y", Ports: []gns3.Port{port("eth0", "eth0", 0, 0), port("Ethernet0", "e0", 1, 0)}}
	tests := []struct {
		node             gns3.Node
		given            string
		adapter, portNum int
		err              string // a substring of the error; "" for success
	}{
		{vpcsPorts(), "Ethernet0", 0, 0, ""},
		{vpcsPorts(), "e0", 0, 0, ""},
		{vpcsPorts(), "eth0", 0, 0, ""},
		{vpcsPorts(), "ETHERNET0", 0, 0, ""},
		{vpcsPorts(), "e1", 0, 0, "port 'e1' not found on PC1; ports: Ethernet0"},

		{iouPorts(), "e0/0", 0, 0, ""},
		{iouPorts(), "Ethernet0/0", 0, 0, ""},
		{iouPorts(), "Ethernet1/3", 1, 3, ""},
		{iouPorts(), "eth1/2", 1, 2, ""},
		{iouPorts(), "s2/1", 2, 1, ""},
		{iouPorts(), "Serial 2/3", 2, 3, ""},
		{iouPorts(), "e0/9", 0, 0, "port 'e0/9' not found on R1; ports: Ethernet0/0, Ethernet0/1, Ethernet0/2, Ethernet0/3, Ethernet1/0"},
		{iouPorts(), "e0", 0, 0, "not found on R1"},

		{iosvPorts(), "Gi0/2", 2, 0, ""},
		{iosvPorts(), "gi0/1", 1, 0, ""},
		{iosvPorts(), "g0/1", 1, 0, ""},
		{iosvPorts(), "GigabitEthernet0/3", 3, 0, ""},
		{iosvPorts(), "Gig0/0", 0, 0, ""},
		{iosvPorts(), "e0/0", 0, 0, "port 'e0/0' not found on R2; ports: Gi0/0, Gi0/1, Gi0/2, Gi0/3"},
		{iosvPorts(), "Gi0/4", 0, 0, "not found on R2"},

		{c7200Ports(), "f0/0", 0, 0, ""},
		{c7200Ports(), "FastEthernet0/0", 0, 0, ""},
		{c7200Ports(), "Fa0/0", 0, 0, ""},
		{c7200Ports(), "e1/0", 1, 0, ""},
		{c7200Ports(), "Ethernet1/3", 1, 3, ""},
		{c7200Ports(), "eth1/7", 1, 7, ""},
		{c7200Ports(), "e0/0", 0, 0, "port 'e0/0' not found on R3; ports: FastEthernet0/0, Ethernet1/0"},

		{dockerPorts(), "eth0", 0, 0, ""},
		{dockerPorts(), "eth2", 2, 0, ""},
		{dockerPorts(), "e1", 1, 0, ""},
		{dockerPorts(), "Ethernet3", 3, 0, ""},
		{dockerPorts(), "eth4", 0, 0, "port 'eth4' not found on alpine-1; ports: eth0, eth1, eth2, eth3"},

		{switchPorts(), "Ethernet7", 0, 7, ""},
		{switchPorts(), "e7", 0, 7, ""},
		{switchPorts(), "eth3", 0, 3, ""},
		{switchPorts(), "7", 0, 7, ""},
		{switchPorts(), "e8", 0, 0, "port 'e8' not found on Switch1; ports: Ethernet0, Ethernet1"},

		{mixed, "0/0", 0, 0, "port '0/0' is ambiguous on X: Ethernet0/0, Serial0/0"},
		{mixed, "s0/0", 1, 0, ""},
		{twoEth, "eth0", 0, 0, ""},
		{twoEth, "e0", 1, 0, ""},
		{twoEth, "et0", 0, 0, "port 'et0' is ambiguous on Y: eth0, Ethernet0"},
		{gns3.Node{Name: "Cloud1"}, "eth0", 0, 0, "port 'eth0': Cloud1 has no network ports"},
	}
	for _, tt := range tests {
		t.Run(tt.node.Name+"/"+tt.given, func(t *testing.T) {
			p, err := resolvePort(&tt.node, tt.given)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("resolvePort(%q) = %+v, %v; want an error with %q", tt.given, p, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolvePort(%q): %v", tt.given, err)
			}
			if p.AdapterNumber != tt.adapter || p.PortNumber != tt.portNum {
				t.Errorf("resolvePort(%q) = %s adapter %d port %d; want adapter %d port %d", tt.given, p.Name, p.AdapterNumber, p.PortNumber, tt.adapter, tt.portNum)
			}
		})
	}
}
