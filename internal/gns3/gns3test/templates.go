package gns3test

import (
	"fmt"
	"sort"
	"strings"
)

// Built-in GNS3 v3 template ids: uuid5(NAMESPACE_X500, template type), as
// gns3server/services/templates.py (BUILTIN_TEMPLATES) computes them.
const (
	TemplateCloud          = "b6ed2e82-d5aa-5a86-b6dd-8b9dd1c66800"
	TemplateNAT            = "2d7eb722-90e8-56c1-8dfa-a30d79847984"
	TemplateVPCS           = "52136454-1f50-590a-94e4-816bd02d1062"
	TemplateEthernetSwitch = "92a43283-9c7e-5a68-9695-1f05a2e8dd05"
	TemplateEthernetHub    = "8ed8d072-b183-541c-81ec-6e106c3a5a2a"
)

// Ids of the templates SeedTemplates adds (fixed, so tests may name them).
const (
	TemplateIOSv   = "a5b3a2a7-55c4-4b7b-9a2d-3f6c1e0b7d01"
	TemplateC7200  = "c7200e1f-2c4d-4a8e-8f3a-6d2b9e0a7c02"
	TemplateIOUL3  = "10a1b3c5-7d9e-4f1a-8b2c-4d6e8f0a1c03"
	TemplateDocker = "d0c4e7a1-3b5c-4d7e-9f1a-2b4c6d8e0f04"
)

// Default symbols of the "Affinity-square-blue" theme, the v3 default.
const (
	symbolRouter  = ":/symbols/affinity/square/blue/router.svg"
	symbolClient  = ":/symbols/affinity/square/blue/client.svg"
	symbolSwitch  = ":/symbols/affinity/square/blue/switch.svg"
	symbolHub     = ":/symbols/affinity/square/blue/hub.svg"
	symbolCloud   = ":/symbols/affinity/square/blue/cloud.svg"
	symbolNAT     = ":/symbols/affinity/square/blue/nat.svg"
	symbolDocker  = ":/symbols/affinity/square/blue/docker.svg"
	symbolL3      = ":/symbols/affinity/square/blue/switch_multilayer.svg"
	templateStamp = "2025-01-01T00:00:00"
)

// BuiltinTemplates returns the built-in templates as GET /v3/templates
// lists them (compute_id null: the client picks the compute). The Frame
// Relay and ATM switches of real GNS3 are left out.
func BuiltinTemplates() []map[string]any {
	return []map[string]any{
		{"template_id": TemplateCloud, "template_type": "cloud", "name": "Cloud", "default_name_format": "Cloud{0}",
			"category": "guest", "symbol": symbolCloud, "compute_id": nil, "builtin": true},
		{"template_id": TemplateNAT, "template_type": "nat", "name": "NAT", "default_name_format": "NAT{0}",
			"category": "guest", "symbol": symbolNAT, "compute_id": nil, "builtin": true},
		{"template_id": TemplateVPCS, "template_type": "vpcs", "name": "VPCS", "default_name_format": "PC{0}",
			"category": "guest", "symbol": symbolClient, "base_script_file": "vpcs_base_config.txt",
			"compute_id": nil, "builtin": true, "tags": []any{"device_type:gns3_vpcs_telnet"}},
		{"template_id": TemplateEthernetSwitch, "template_type": "ethernet_switch", "name": "Ethernet switch",
			"console_type": "none", "default_name_format": "Switch{0}", "category": "switch", "symbol": symbolSwitch,
			"compute_id": nil, "builtin": true},
		{"template_id": TemplateEthernetHub, "template_type": "ethernet_hub", "name": "Ethernet hub",
			"default_name_format": "Hub{0}", "category": "switch", "symbol": symbolHub, "compute_id": nil, "builtin": true},
	}
}

// userTemplate fills the fields every database template has.
func userTemplate(id, name, typ, category, nameFormat, symbol string, extra map[string]any) map[string]any {
	t := map[string]any{
		"template_id": id, "name": name, "template_type": typ, "category": category,
		"default_name_format": nameFormat, "symbol": symbol, "builtin": false, "compute_id": "local",
		"usage": "", "version": nil, "tags": []any{}, "created_at": templateStamp, "updated_at": templateStamp,
	}
	for k, v := range extra {
		t[k] = v
	}
	return t
}

// QemuTemplate is a Qemu template with adapters network adapters named by
// portNameFormat (for example "Gi0/{0}" gives Gi0/0, Gi0/1, ... on adapters
// 0, 1, ... port 0). Nodes are named from "{name}-{0}" as GNS3's default
// (spaces removed). id "" means a new id when added.
func QemuTemplate(id, name string, adapters int, portNameFormat string) map[string]any {
	return userTemplate(id, name, "qemu", "router", "{name}-{0}", symbolRouter, map[string]any{
		"adapters": adapters, "adapter_type": "e1000", "port_name_format": portNameFormat, "port_segment_size": 0,
		"first_port_name": "", "console_type": "telnet", "console_auto_start": false, "aux_type": "none",
		"platform": "x86_64", "qemu_path": "/usr/bin/qemu-system-x86_64", "ram": 512, "cpus": 1, "maxcpus": 1,
		"hda_disk_image": "vios-adventerprisek9-m.spa.159-3.m6.qcow2", "hda_disk_interface": "virtio",
		"boot_priority": "c", "on_close": "power_off", "linked_clone": true, "mac_address": "", "options": "",
		"custom_adapters": []any{},
	})
}

// IOSvTemplate is a Qemu "Cisco IOSv" router: 4 adapters, ports Gi0/0 ..
// Gi0/3 (adapters 0..3, port 0), nodes CiscoIOSv-1, CiscoIOSv-2, ...
func IOSvTemplate() map[string]any {
	return QemuTemplate(TemplateIOSv, "Cisco IOSv", 4, "Gi0/{0}")
}

// C7200Template is a Dynamips c7200 router template with a C7200-IO-FE in
// slot 0 and a PA-4E in slot 1: ports FastEthernet0/0 (adapter 0, port 0)
// and Ethernet1/0 .. Ethernet1/3 (adapter 1, ports 0..3); nodes R1, R2, ...
func C7200Template() map[string]any {
	return userTemplate(TemplateC7200, "Cisco 7200", "dynamips", "router", "R{0}", symbolRouter, map[string]any{
		"platform": "c7200", "image": "c7200-adventerprisek9-mz.124-24.T5.image", "ram": 512, "nvram": 512,
		"npe": "npe-400", "midplane": "vxr", "sparsemem": true, "exec_area": 64, "mmap": true,
		"system_id": "FTX0945W0MY", "startup_config": "ios_base_startup-config.txt", "idlepc": "0x606df838",
		"idlemax": 500, "idlesleep": 30, "disk0": 0, "disk1": 0, "auto_delete_disks": false,
		"console_type": "telnet", "console_auto_start": false, "aux_type": "none", "mac_addr": "",
		"slot0": "C7200-IO-FE", "slot1": "PA-4E", "slot2": "", "slot3": "", "slot4": "", "slot5": "", "slot6": "",
	})
}

// IOUL3Template is an IOU L3 template with GNS3's defaults (2 Ethernet and
// 2 serial adapters of 4 ports): Ethernet0/0..0/3 (adapter 0, ports 0..3),
// Ethernet1/0..1/3 (adapter 1), Serial2/0..2/3 and Serial3/0..3/3
// (adapters 2 and 3, serial links); nodes IOU1, IOU2, ...
func IOUL3Template() map[string]any {
	return userTemplate(TemplateIOUL3, "IOU L3", "iou", "router", "IOU{0}", symbolL3, map[string]any{
		"path": "i86bi-linux-l3-adventerprisek9-15.5.2T.bin", "ethernet_adapters": 2, "serial_adapters": 2,
		"ram": 256, "nvram": 128, "use_default_iou_values": true, "startup_config": "iou_l3_base_startup-config.txt",
		"private_config": "", "l1_keepalives": false, "console_type": "telnet", "console_auto_start": false,
	})
}

// DockerTemplate is a Docker template of image with adapters interfaces
// eth0..eth<adapters-1> (adapter n, port 0); nodes "{name}-{0}".
func DockerTemplate(id, name, image string, adapters int) map[string]any {
	return userTemplate(id, name, "docker", "guest", "{name}-{0}", symbolDocker, map[string]any{
		"image": image, "adapters": adapters, "start_command": "", "environment": "", "console_type": "telnet",
		"aux_type": "none", "console_auto_start": false, "console_http_port": 80, "console_http_path": "/",
		"console_resolution": "1024x768", "extra_hosts": "", "extra_volumes": []any{}, "memory": 0, "cpus": 0,
		"mac_address": "", "custom_adapters": []any{},
	})
}

// LabTemplates names the ids SeedTemplates added.
type LabTemplates struct {
	IOSv   string // Qemu "Cisco IOSv"
	C7200  string // Dynamips "Cisco 7200"
	IOUL3  string // IOU "IOU L3"
	Docker string // Docker "Alpine" with 2 adapters
}

// SeedTemplates adds IOSvTemplate, C7200Template, IOUL3Template and an
// "Alpine" DockerTemplate with 2 adapters, and returns their ids.
func (s *Server) SeedTemplates() LabTemplates {
	return LabTemplates{
		IOSv:   s.AddTemplate(IOSvTemplate()),
		C7200:  s.AddTemplate(C7200Template()),
		IOUL3:  s.AddTemplate(IOUL3Template()),
		Docker: s.AddTemplate(DockerTemplate(TemplateDocker, "Alpine", "alpine:latest", 2)),
	}
}

// Fields of a template that are node attributes, not node properties.
var templateNodeFields = map[string]bool{
	"template_id": true, "template_type": true, "name": true, "default_name_format": true, "category": true,
	"symbol": true, "compute_id": true, "builtin": true, "usage": true, "version": true, "tags": true,
	"created_at": true, "updated_at": true, "console_type": true, "console_auto_start": true, "aux_type": true,
	"port_name_format": true, "port_segment_size": true, "first_port_name": true, "custom_adapters": true,
	"base_script_file": true,
}

// alwaysRunning reports GNS3's built-in node types (BUILTIN_NODE_TYPES):
// always started, start/stop/suspend do nothing.
func alwaysRunning(nodeType string) bool {
	switch nodeType {
	case "cloud", "nat", "ethernet_switch", "ethernet_hub", "frame_relay_switch", "atm_switch":
		return true
	}
	return false
}

// canSuspend reports the node types whose compute implements suspend;
// GNS3 v3 answers 204 and does nothing for the others (the compute's 405
// is swallowed by the controller).
func canSuspend(nodeType string) bool {
	switch nodeType {
	case "qemu", "dynamips", "docker", "virtualbox", "vmware":
		return true
	}
	return false
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string, def int) int {
	switch v := m[k].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return def
}

// nodeFromTemplate builds the payload GNS3 v3 answers for a node created
// from tmpl. console is nil for nodes without a console.
func nodeFromTemplate(projectID, projectPath, nodeID, name string, tmpl map[string]any, x, y int, console any, mac int) map[string]any {
	typ := str(tmpl, "template_type")
	props := map[string]any{}
	for k, v := range tmpl {
		if !templateNodeFields[k] && v != nil && v != "" {
			props[k] = v
		}
	}
	consoleType := str(tmpl, "console_type")
	if consoleType == "" {
		consoleType = "telnet"
		if alwaysRunning(typ) {
			consoleType = "none"
		}
	}
	if consoleType == "none" {
		console = nil
	}
	auxType := str(tmpl, "aux_type")
	if auxType == "" {
		auxType = "none"
	}
	portNameFormat, segment := "Ethernet{0}", 0
	if f := str(tmpl, "port_name_format"); f != "" {
		portNameFormat = f
	}
	if typ == "iou" {
		portNameFormat, segment = "Ethernet{segment0}/{port0}", 4
	}
	var firstPort any
	if typ == "qemu" {
		firstPort = str(tmpl, "first_port_name")
	}
	var nodeDir, commandLine any
	if !alwaysRunning(typ) {
		nodeDir = fmt.Sprintf("%s/project-files/%s/%s", projectPath, typ, nodeID)
		commandLine = ""
	}
	status := "stopped"
	if alwaysRunning(typ) {
		status = "started"
	}
	baseMAC := fmt.Sprintf("0c:%02x:%02x:%02x:00:00", (mac>>16)&0xff, (mac>>8)&0xff, mac&0xff)
	switch typ {
	case "qemu", "docker":
		props["mac_address"] = baseMAC
	case "ethernet_switch":
		mapping := make([]any, 0, 8)
		for i := 0; i < 8; i++ {
			mapping = append(mapping, map[string]any{"name": fmt.Sprintf("Ethernet%d", i), "port_number": i, "type": "access", "vlan": 1, "ethertype": "0x8100"})
		}
		props["ports_mapping"] = mapping
	case "ethernet_hub":
		mapping := make([]any, 0, 8)
		for i := 0; i < 8; i++ {
			mapping = append(mapping, map[string]any{"name": fmt.Sprintf("Ethernet%d", i), "port_number": i})
		}
		props["ports_mapping"] = mapping
	case "cloud":
		props["ports_mapping"] = []any{map[string]any{"interface": "eth0", "name": "eth0", "port_number": 0, "type": "ethernet"}}
		props["remote_console_host"], props["remote_console_port"], props["remote_console_type"] = "127.0.0.1", 23, "none"
	case "nat":
		props["ports_mapping"] = []any{map[string]any{"interface": "virbr0", "name": "nat0", "port_number": 0, "type": "ethernet"}}
	case "dynamips":
		for i := 0; i < 7; i++ { // c7200 slots, null when empty
			k := fmt.Sprintf("slot%d", i)
			if s, _ := tmpl[k].(string); s != "" {
				props[k] = s
			} else {
				props[k] = nil
			}
		}
		props["dynamips_id"] = mac%4096 + 1
	case "iou":
		props["application_id"] = mac%512 + 1
	}
	tags := []any{}
	if t, ok := tmpl["tags"].([]any); ok {
		tags = append(tags, t...)
	}
	symbol := str(tmpl, "symbol")
	if symbol == "" {
		symbol = ":/symbols/computer.svg"
	}
	n := map[string]any{
		"aux":                nil,
		"aux_type":           auxType,
		"command_line":       commandLine,
		"compute_id":         "local",
		"console":            console,
		"console_auto_start": tmpl["console_auto_start"] == true,
		"console_host":       "127.0.0.1",
		"console_type":       consoleType,
		"custom_adapters":    []any{},
		"first_port_name":    firstPort,
		"height":             60,
		"label":              nodeLabel(name),
		"locked":             false,
		"name":               name,
		"node_directory":     nodeDir,
		"node_id":            nodeID,
		"node_type":          typ,
		"port_name_format":   portNameFormat,
		"port_segment_size":  segment,
		"project_id":         projectID,
		"properties":         props,
		"status":             status,
		"symbol":             symbol,
		"tags":               tags,
		"template_id":        str(tmpl, "template_id"),
		"width":              60,
		"x":                  x,
		"y":                  y,
		"z":                  1,
	}
	n["ports"] = listPorts(n)
	return n
}

// nodeLabel is the label GNS3 centres above a 60 px symbol.
func nodeLabel(name string) map[string]any {
	return label(name, (60-7*len(name))/2, -25)
}

func port(name, short string, adapter, portNumber int, linkType string) map[string]any {
	p := ethernetPort(name, short, adapter, portNumber)
	if linkType == "serial" {
		p["link_type"] = "serial"
		p["data_link_types"] = map[string]any{"Frame Relay": "DLT_FRELAY", "Cisco HDLC": "DLT_C_HDLC", "Cisco PPP": "DLT_PPP_SERIAL"}
	}
	return p
}

// shortName follows Port.short_name of gns3server/controller/ports/port.py.
func shortName(name, long, short string, interfaceNumber int) string {
	switch {
	case strings.Contains(name, "/"):
		return strings.ReplaceAll(name, long, short)
	case strings.HasPrefix(name, fmt.Sprintf("%s%d", long, interfaceNumber)):
		return fmt.Sprintf("%s%d", short, interfaceNumber)
	}
	return name
}

// listPorts builds a node's ports as Node._list_ports of
// gns3server/controller/node.py does for the node types the fake knows.
func listPorts(n map[string]any) []any {
	props, _ := n["properties"].(map[string]any)
	ports := []any{}
	switch typ := str(n, "node_type"); typ {
	case "vpcs":
		ports = append(ports, port("Ethernet0", "e0", 0, 0, "ethernet"))
	case "ethernet_switch", "ethernet_hub":
		mapping, _ := props["ports_mapping"].([]any)
		for i, m := range mapping {
			mm, _ := m.(map[string]any)
			ports = append(ports, port(str(mm, "name"), fmt.Sprintf("e%d", i), 0, i, "ethernet"))
		}
	case "cloud", "nat":
		mapping, _ := props["ports_mapping"].([]any)
		for i, m := range mapping {
			mm, _ := m.(map[string]any)
			ports = append(ports, port(str(mm, "name"), str(mm, "name"), 0, i, "ethernet"))
		}
	case "docker":
		base := str(props, "mac_address")
		for a := 0; a < num(props, "adapters", 1); a++ {
			p := port(fmt.Sprintf("eth%d", a), fmt.Sprintf("eth%d", a), a, 0, "ethernet")
			if base != "" {
				p["mac_address"] = addMAC(base, a)
			}
			ports = append(ports, p)
		}
	case "dynamips":
		ports = dynamipsPorts(props)
	default: // qemu, iou, ...: StandardPortFactory
		ports = standardPorts(n, props)
	}
	return ports
}

func addMAC(base string, n int) string {
	var b [6]int
	if _, err := fmt.Sscanf(base, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]); err != nil {
		return base
	}
	v := 0
	for _, x := range b {
		v = v<<8 | x
	}
	v += n
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", v>>40&0xff, v>>32&0xff, v>>24&0xff, v>>16&0xff, v>>8&0xff, v&0xff)
}

// formatPortName applies a GNS3 port name format ({0}, {1}, {port0},
// {segment0}, {adapter}).
func formatPortName(format string, iface, segment, adapter int) string {
	r := []string{"{0}", fmt.Sprint(iface), "{1}", fmt.Sprint(segment), "{adapter}", fmt.Sprint(adapter)}
	for i := 0; i < 9; i++ {
		r = append(r, fmt.Sprintf("{port%d}", i), fmt.Sprint(iface+i), fmt.Sprintf("{segment%d}", i), fmt.Sprint(segment+i))
	}
	return strings.NewReplacer(r...).Replace(format)
}

// standardPorts follows StandardPortFactory of
// gns3server/controller/ports/port_factory.py.
func standardPorts(n, props map[string]any) []any {
	ports := []any{}
	perAdapter := 1
	if str(n, "node_type") == "iou" {
		perAdapter = 4
	}
	format := str(n, "port_name_format")
	segSize := num(n, "port_segment_size", 0)
	first, _ := n["first_port_name"].(string)
	ethernet := num(props, "adapters", 1)
	if _, ok := props["ethernet_adapters"]; ok {
		ethernet = num(props, "ethernet_adapters", 0)
	}
	base := str(props, "mac_address")
	adapter, iface, segment := 0, 0, 0
	for adapter = 0; adapter < ethernet; adapter++ {
		for pn := 0; pn < perAdapter; pn++ {
			var p map[string]any
			if first != "" && adapter == 0 {
				p = port(first, first, adapter, pn, "ethernet")
			} else {
				name := formatPortName(format, iface, segment, adapter)
				p = port(name, shortName(name, "Ethernet", "e", segment), adapter, pn, "ethernet")
				iface++
				if segSize > 0 {
					if iface%segSize == 0 {
						segment++
						iface = 0
					}
				} else {
					segment++
				}
			}
			if at := str(props, "adapter_type"); at != "" {
				p["adapter_type"] = at
			}
			if base != "" {
				p["mac_address"] = addMAC(base, adapter)
			}
			ports = append(ports, p)
		}
	}
	for i := 0; i < num(props, "serial_adapters", 0); i, adapter = i+1, adapter+1 {
		for pn := 0; pn < perAdapter; pn++ {
			name := fmt.Sprintf("Serial%d/%d", segment, pn)
			ports = append(ports, port(name, shortName(name, "Serial", "s", segment), adapter, pn, "serial"))
		}
		segment++
	}
	return ports
}

// dynamipsAdapters is part of DynamipsPortFactory.ADAPTER_MATRIX: number
// of ports and port class (long name, short name, link type).
var dynamipsAdapters = map[string]struct {
	ports             int
	long, short, link string
}{
	"C7200-IO-FE":   {1, "FastEthernet", "f", "ethernet"},
	"C7200-IO-2FE":  {2, "FastEthernet", "f", "ethernet"},
	"C7200-IO-GE-E": {1, "GigabitEthernet", "g", "ethernet"},
	"GT96100-FE":    {2, "FastEthernet", "f", "ethernet"},
	"Leopard-2FE":   {2, "FastEthernet", "f", "ethernet"},
	"NM-16ESW":      {16, "FastEthernet", "f", "ethernet"},
	"NM-1E":         {1, "Ethernet", "e", "ethernet"},
	"NM-1FE-TX":     {1, "FastEthernet", "f", "ethernet"},
	"NM-4E":         {4, "Ethernet", "e", "ethernet"},
	"NM-4T":         {4, "Serial", "s", "serial"},
	"PA-2FE-TX":     {2, "FastEthernet", "f", "ethernet"},
	"PA-4E":         {4, "Ethernet", "e", "ethernet"},
	"PA-4T+":        {4, "Serial", "s", "serial"},
	"PA-8E":         {8, "Ethernet", "e", "ethernet"},
	"PA-8T":         {8, "Serial", "s", "serial"},
	"PA-FE-TX":      {1, "FastEthernet", "f", "ethernet"},
	"PA-GE":         {1, "GigabitEthernet", "g", "ethernet"},
}

// dynamipsPorts follows DynamipsPortFactory: slots in name order, the
// adapter number being the slot (empty slots count too), ports named
// <Type><slot>/<port>.
func dynamipsPorts(props map[string]any) []any {
	ports := []any{}
	keys := make([]string, 0, len(props))
	for k := range props {
		if strings.HasPrefix(k, "slot") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for adapter, k := range keys {
		a, ok := dynamipsAdapters[str(props, k)]
		if !ok {
			continue
		}
		for pn := 0; pn < a.ports; pn++ {
			ports = append(ports, port(fmt.Sprintf("%s%d/%d", a.long, adapter, pn), fmt.Sprintf("%s%d/%d", a.short, adapter, pn), adapter, pn, a.link))
		}
	}
	return ports
}
