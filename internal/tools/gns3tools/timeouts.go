package gns3tools

import "time"

// waitTimeouts are the default status waits by node_type: builtin devices
// and VPCS switch state at once, containers in a minute, emulated routers
// and virtual machines take minutes to boot.
var waitTimeouts = map[string]time.Duration{
	"vpcs":               30 * time.Second,
	"ethernet_switch":    30 * time.Second,
	"ethernet_hub":       30 * time.Second,
	"cloud":              30 * time.Second,
	"nat":                30 * time.Second,
	"frame_relay_switch": 30 * time.Second,
	"atm_switch":         30 * time.Second,
	"docker":             60 * time.Second,
	"iou":                90 * time.Second,
	"dynamips":           120 * time.Second,
	"qemu":               180 * time.Second,
	"virtualbox":         180 * time.Second,
	"vmware":             180 * time.Second,
}

// otherWaitTimeout is the default wait of a node type not listed above.
const otherWaitTimeout = 120 * time.Second

// knownNodeTypes lists the node types with a default wait, sorted.
var knownNodeTypes = []string{
	"atm_switch", "cloud", "docker", "dynamips", "ethernet_hub", "ethernet_switch",
	"frame_relay_switch", "iou", "nat", "qemu", "virtualbox", "vmware", "vpcs",
}

// DefaultWaitTimeout returns how long start, stop and suspend wait by
// default for a node of nodeType to reach the asked status: 30s for vpcs,
// ethernet_switch, ethernet_hub, cloud, nat, frame_relay_switch and
// atm_switch; 60s for docker; 90s for iou; 120s for dynamips; 180s for
// qemu, virtualbox and vmware; 120s for any other type.
func DefaultWaitTimeout(nodeType string) time.Duration {
	if d, ok := waitTimeouts[nodeType]; ok {
		return d
	}
	return otherWaitTimeout
}
