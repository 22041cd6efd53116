package consoletools

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"agentchat/internal/console"
	"agentchat/internal/gns3"
)

// deviceTypeTag is the prefix of the node tag naming the device type.
const deviceTypeTag = "device_type:"

// deviceType is the console driver of a node: its device_type tag, or
// vpcs for a VPCS node.
func deviceType(n *gns3.Node) (console.DeviceType, error) {
	supported := strings.Join(console.SupportedTypes(), ", ")
	for _, tag := range n.Tags {
		key, value, ok := strings.Cut(strings.TrimSpace(tag), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(key)+":", deviceTypeTag) {
			continue
		}
		if t, ok := console.Lookup(value); ok {
			return t, nil
		}
		return console.DeviceType{}, fmt.Errorf("%s has the tag %s, an unsupported device type; supported types: %s",
			n.Name, strings.TrimSpace(tag), supported)
	}
	if n.NodeType == "vpcs" {
		t, _ := console.Lookup(console.TypeVPCS)
		return t, nil
	}
	return console.DeviceType{}, fmt.Errorf("%s has no device type: tag the node in GNS3 with device_type:<type>, "+
		"one of the supported types: %s (VPCS nodes need no tag)", n.Name, supported)
}

// consoleAddr is the node's telnet console address.
func (s *Toolset) consoleAddr(n *gns3.Node) (string, error) {
	if n.Console == nil || *n.Console <= 0 {
		return "", fmt.Errorf("%s has no console", n.Name)
	}
	if t := strings.ToLower(n.ConsoleType); t != "" && t != "telnet" {
		return "", fmt.Errorf("%s's console is %s, not telnet", n.Name, t)
	}
	host := strings.Trim(strings.TrimSpace(n.ConsoleHost), "[]")
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = ""
	}
	if host == "" {
		host = s.consoleHost
	}
	if host == "" {
		return "", fmt.Errorf("the console host of %s is unknown", n.Name)
	}
	return net.JoinHostPort(host, strconv.Itoa(*n.Console)), nil
}
