package gns3test

import (
	"fmt"

	"github.com/google/uuid"
)

const labelStyle = "font-family: TypeWriter;font-size: 10.0;font-weight: bold;fill: #000000;fill-opacity: 1.0;"

// Topology names the ids of a seeded lab.
type Topology struct {
	// Nodes maps node names (PC1, PC2, Switch1, R1) to node ids.
	Nodes map[string]string
	// Links lists the link ids: PC1-Switch1, PC2-Switch1, R1-Switch1.
	Links []string
}

func label(text string, x, y int) map[string]any {
	return map[string]any{"rotation": 0, "style": labelStyle, "text": text, "x": x, "y": y}
}

func ethernetPort(name, short string, adapter, port int) map[string]any {
	return map[string]any{
		"adapter_number":  adapter,
		"data_link_types": map[string]any{"Ethernet": "DLT_EN10MB"},
		"link_type":       "ethernet",
		"name":            name,
		"port_number":     port,
		"short_name":      short,
	}
}

// VPCSNode is the payload of a VPCS node as GNS3 v3 returns it.
func VPCSNode(projectID, name, status string, console, x, y int) map[string]any {
	id := uuid.NewString()
	return map[string]any{
		"aux":                nil,
		"aux_type":           "none",
		"command_line":       "",
		"compute_id":         "local",
		"console":            console,
		"console_auto_start": false,
		"console_host":       "127.0.0.1",
		"console_type":       "telnet",
		"custom_adapters":    []any{},
		"first_port_name":    nil,
		"height":             59,
		"label":              label(name, 18, -25),
		"locked":             false,
		"name":               name,
		"node_directory":     fmt.Sprintf("/home/gns3/GNS3/projects/%s/project-files/vpcs/%s", projectID, id),
		"node_id":            id,
		"node_type":          "vpcs",
		"port_name_format":   "Ethernet{0}",
		"port_segment_size":  0,
		"ports":              []any{ethernetPort("Ethernet0", "e0", 0, 0)},
		"project_id":         projectID,
		"properties":         map[string]any{},
		"status":             status,
		"symbol":             ":/symbols/vpcs_guest.svg",
		"template_id":        TemplateVPCS,
		"width":              65,
		"x":                  x,
		"y":                  y,
		"z":                  1,
	}
}

// SwitchNode is the payload of a built-in 8-port Ethernet switch.
func SwitchNode(projectID, name string, x, y int) map[string]any {
	ports := make([]any, 0, 8)
	mapping := make([]any, 0, 8)
	for i := 0; i < 8; i++ {
		ports = append(ports, ethernetPort(fmt.Sprintf("Ethernet%d", i), fmt.Sprintf("e%d", i), 0, i))
		mapping = append(mapping, map[string]any{"name": fmt.Sprintf("Ethernet%d", i), "port_number": i, "type": "access", "vlan": 1, "ethertype": ""})
	}
	return map[string]any{
		"aux":                nil,
		"aux_type":           "none",
		"command_line":       nil,
		"compute_id":         "local",
		"console":            5003,
		"console_auto_start": false,
		"console_host":       "127.0.0.1",
		"console_type":       "none",
		"custom_adapters":    []any{},
		"first_port_name":    nil,
		"height":             32,
		"label":              label(name, 5, -25),
		"locked":             false,
		"name":               name,
		"node_directory":     nil,
		"node_id":            uuid.NewString(),
		"node_type":          "ethernet_switch",
		"port_name_format":   "Ethernet{0}",
		"port_segment_size":  0,
		"ports":              ports,
		"project_id":         projectID,
		"properties":         map[string]any{"ports_mapping": mapping},
		"status":             "started",
		"symbol":             ":/symbols/ethernet_switch.svg",
		"template_id":        TemplateEthernetSwitch,
		"width":              72,
		"x":                  x,
		"y":                  y,
		"z":                  1,
	}
}

// QemuRouterNode is the payload of a stopped Qemu router with four
// GigabitEthernet ports.
func QemuRouterNode(projectID, name string, x, y int) map[string]any {
	id := uuid.NewString()
	ports := make([]any, 0, 4)
	for i := 0; i < 4; i++ {
		p := ethernetPort(fmt.Sprintf("Gi0/%d", i), fmt.Sprintf("gi0/%d", i), i, 0)
		p["adapter_type"] = "e1000"
		p["mac_address"] = fmt.Sprintf("0c:8a:5d:1e:00:%02x", i)
		ports = append(ports, p)
	}
	return map[string]any{
		"aux":                nil,
		"aux_type":           "none",
		"command_line":       "",
		"compute_id":         "local",
		"console":            5004,
		"console_auto_start": false,
		"console_host":       "127.0.0.1",
		"console_type":       "telnet",
		"custom_adapters":    []any{},
		"first_port_name":    "",
		"height":             45,
		"label":              label(name, 22, -25),
		"locked":             false,
		"name":               name,
		"node_directory":     fmt.Sprintf("/home/gns3/GNS3/projects/%s/project-files/qemu/%s", projectID, id),
		"node_id":            id,
		"node_type":          "qemu",
		"port_name_format":   "Gi0/{0}",
		"port_segment_size":  0,
		"ports":              ports,
		"project_id":         projectID,
		"properties": map[string]any{
			"adapter_type": "e1000", "adapters": 4, "console_type": "telnet", "cpus": 1,
			"hda_disk_image": "vios-adventerprisek9-m.spa.159-3.m6.qcow2", "hda_disk_interface": "virtio",
			"platform": "x86_64", "qemu_path": "/usr/bin/qemu-system-x86_64", "ram": 512,
			"on_close": "power_off", "boot_priority": "c",
		},
		"status":      "stopped",
		"symbol":      ":/symbols/router.svg",
		"template_id": TemplateIOSv,
		"width":       66,
		"x":           x,
		"y":           y,
		"z":           1,
	}
}

// LinkPayload is the payload of an Ethernet link between two node ports.
func LinkPayload(projectID, nodeA string, adapterA, portA int, labelA, nodeB string, adapterB, portB int, labelB string) map[string]any {
	end := func(node string, adapter, port int, text string, x, y int) map[string]any {
		return map[string]any{"adapter_number": adapter, "label": label(text, x, y), "node_id": node, "port_number": port}
	}
	return map[string]any{
		"capture_compute_id": nil,
		"capture_file_name":  nil,
		"capture_file_path":  nil,
		"capturing":          false,
		"filters":            map[string]any{},
		"link_id":            uuid.NewString(),
		"link_style":         map[string]any{},
		"link_type":          "ethernet",
		"nodes": []any{
			end(nodeA, adapterA, portA, labelA, 69, 27),
			end(nodeB, adapterB, portB, labelB, -5, 8),
		},
		"project_id": projectID,
		"suspend":    false,
	}
}

// SeedTopology adds a small lab to a project: PC1 (started) and PC2
// (stopped) VPCS, an Ethernet switch Switch1, a Qemu router R1 (stopped),
// and the links PC1 e0 - Switch1 e0, PC2 e0 - Switch1 e1, R1 Gi0/0 -
// Switch1 e7.
func (s *Server) SeedTopology(projectID string) Topology {
	t := Topology{Nodes: map[string]string{}}
	t.Nodes["PC1"] = s.AddNode(projectID, VPCSNode(projectID, "PC1", "started", 5001, -300, -100))
	t.Nodes["PC2"] = s.AddNode(projectID, VPCSNode(projectID, "PC2", "stopped", 5002, -300, 100))
	t.Nodes["Switch1"] = s.AddNode(projectID, SwitchNode(projectID, "Switch1", 0, 0))
	t.Nodes["R1"] = s.AddNode(projectID, QemuRouterNode(projectID, "R1", 300, 0))
	t.Links = append(t.Links,
		s.AddLink(projectID, LinkPayload(projectID, t.Nodes["PC1"], 0, 0, "e0", t.Nodes["Switch1"], 0, 0, "e0")),
		s.AddLink(projectID, LinkPayload(projectID, t.Nodes["PC2"], 0, 0, "e0", t.Nodes["Switch1"], 0, 1, "e1")),
		s.AddLink(projectID, LinkPayload(projectID, t.Nodes["R1"], 0, 0, "gi0/0", t.Nodes["Switch1"], 0, 7, "e7")),
	)
	return t
}
