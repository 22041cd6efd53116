package consoletools

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/tools/toolkit"
)

// Bounds of the arguments.
const (
	maxDevices        = 20
	maxCommands       = 50
	maxCommandLength  = 4000
	maxDeviceName     = 200
	maxLinesPerDevice = 200
)

// devicesArgs are the arguments of a console tool: the devices, each with
// the lines to send (D: commandsDevice or configDevice).
type devicesArgs[D device] struct {
	DeviceConfigs []D `json:"device_configs"`
}

// device is one item of device_configs: a device and its lines.
type device interface {
	name() string
	lines() []string
}

// devices returns the items of a as devices.
func (a devicesArgs[D]) devices() []device {
	out := make([]device, len(a.DeviceConfigs))
	for i, d := range a.DeviceConfigs {
		out[i] = d
	}
	return out
}

// commandsDevice is a device and the commands to run on it
// (execute_multiple_device_commands, execute_vpcs_commands).
type commandsDevice struct {
	DeviceName string   `json:"device_name" jsonschema:"The device: the GNS3 node's name (as in the topology) or its node_id."`
	Commands   []string `json:"commands"`
}

func (d commandsDevice) name() string    { return d.DeviceName }
func (d commandsDevice) lines() []string { return d.Commands }

// deviceSchema bounds the schema of a console tool: 1 to maxDevices
// devices, each with a device_name and 1 to maxCommands non-empty lines
// in the property prop, described by desc and each line by lineDesc.
func deviceSchema(prop, desc, lineDesc string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		devices := toolkit.Array(s, "device_configs", 1, maxDevices)
		devices.Description = fmt.Sprintf("The devices and their commands (1 to %d devices, run in parallel; one item per device).", maxDevices)
		// No minimum length: an item without a device name fails alone
		// (its result says so) instead of refusing the whole call.
		toolkit.Length(devices.Items.Properties["device_name"], 0, maxDeviceName)
		lines := toolkit.Array(devices.Items, prop, 1, maxCommands)
		lines.Description, lines.Items.Description = desc, lineDesc
		toolkit.Length(lines.Items, 1, maxCommandLength)
	}
}
