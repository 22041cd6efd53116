package consoletools

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"

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
	if name := typeFromNode(n); name != "" {
		t, _ := console.Lookup(name)
		return t, nil
	}
	return console.DeviceType{}, fmt.Errorf("%s has no device type: tag the node in GNS3 with device_type:<type>, "+
		"one of the supported types: %s (VPCS, Dynamips and IOU nodes and IOSv images need no tag)", n.Name, supported)
}

// typeFromNode is the device type a node without a device_type tag is
// known to be, from what GNS3 reports of it: its node_type (vpcs; dynamips
// and iou run Cisco IOS) or, for a Qemu node, its disk image (an IOSv or
// IOSvL2 image); "" when nothing tells.
func typeFromNode(n *gns3.Node) string {
	switch strings.ToLower(n.NodeType) {
	case "vpcs":
		return console.TypeVPCS
	case "dynamips", "iou":
		return console.TypeCiscoIOSTelnet
	case "qemu":
		image, _ := n.Properties["hda_disk_image"].(string)
		if iosvImageRE.MatchString(strings.ToLower(image)) {
			return console.TypeCiscoIOSTelnet
		}
	}
	return ""
}

// iosvImageRE matches the disk image names of Cisco IOSv and IOSvL2
// ("vios-adventerprisek9-m.spa.159-3.m6.qcow2", "vios_l2-adventerprisek9-m…",
// "iosv-…").
var iosvImageRE = regexp.MustCompile(`^(vios|vios_l2|viosl2|iosv|iosvl2)[-_.]`)

// consoleAddr is the node's telnet console address, on a host the
// console tools may reach (allowedHost).
func (s *Toolset) consoleAddr(ctx context.Context, n *gns3.Node) (string, error) {
	if n.Console == nil || *n.Console <= 0 {
		return "", fmt.Errorf("%s has no console", n.Name)
	}
	if t := strings.ToLower(n.ConsoleType); t != "" && t != "telnet" {
		return "", fmt.Errorf("%s's console is %s, not telnet", n.Name, t)
	}
	host := normalHost(n.ConsoleHost)
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = ""
	}
	if host == "" {
		host = s.consoleHost
	}
	if host == "" {
		return "", fmt.Errorf("the console host of %s is unknown", n.Name)
	}
	dial, err := s.allowedHost(ctx, host)
	if err != nil {
		return "", fmt.Errorf("%s: %w", n.Name, err)
	}
	return net.JoinHostPort(dial, strconv.Itoa(*n.Console)), nil
}

// normalHost is a host as compared: trimmed, without brackets or a
// trailing dot, lower case.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")), ".")
}

// allowedHost checks a console host GNS3 reported and returns the host to
// dial. The host is allowed when it is the GNS3 host (the host of
// GNS3_URL, by name or by one of its addresses) or when the operator's
// allow list (Options.AllowedHosts, CONSOLE_ALLOWED_HOSTS) allows it. A
// host name that is neither is resolved, and its first allowed address is
// dialled (not the name, so that another DNS answer cannot lead
// elsewhere). Anything else is refused and nothing is dialled: GNS3
// (or whoever edits its nodes) cannot point the tools at another host.
func (s *Toolset) allowedHost(ctx context.Context, host string) (string, error) {
	if host == s.consoleHost || (s.allowed != nil && s.allowed.AllowsHost(host)) {
		return host, nil
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip.Unmap()}
	} else if !hostNameRE().MatchString(host) {
		return "", fmt.Errorf("its console host %s is not the GNS3 host; not connected", quoteHost(host))
	} else if addrs, err = s.lookup(ctx, host); err != nil || len(addrs) == 0 {
		return "", fmt.Errorf("its console host %s is not the GNS3 host and cannot be resolved; not connected", quoteHost(host))
	}
	for _, a := range addrs {
		if s.gns3Addr(ctx, a) || (s.allowed != nil && s.allowed.AllowsHost(a.String())) {
			return a.String(), nil
		}
	}
	return "", fmt.Errorf("its console host %s is neither the GNS3 host nor allowed by CONSOLE_ALLOWED_HOSTS; not connected",
		quoteHost(host))
}

// gns3Addr reports whether a is an address of the GNS3 host.
func (s *Toolset) gns3Addr(ctx context.Context, a netip.Addr) bool {
	if s.consoleHost == "" {
		return false
	}
	addrs := []netip.Addr{}
	if ip, err := netip.ParseAddr(s.consoleHost); err == nil {
		addrs = append(addrs, ip)
	} else if found, err := s.lookup(ctx, s.consoleHost); err == nil {
		addrs = found
	}
	for _, g := range addrs {
		if g.Unmap() == a.Unmap() {
			return true
		}
	}
	return false
}

// quoteHost is a host as quoted in an error: quoted when it is an
// address or a host name, else only described (GNS3 node data is not
// echoed as free text).
func quoteHost(h string) string {
	if _, err := netip.ParseAddr(h); err == nil || (len(h) <= 253 && hostNameRE().MatchString(h)) {
		return strconv.Quote(h)
	}
	return "(not a valid host name)"
}

// hostNameRE matches a DNS host name.
// Compiled on first use: most processes open no console.
var hostNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$`)
})
