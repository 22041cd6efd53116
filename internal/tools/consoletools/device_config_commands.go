package consoletools

import (
	"context"

	"agentchat/internal/agent"
	"agentchat/internal/tools/toolkit"
)

// configDevice is a device and the configuration lines to apply.
type configDevice struct {
	DeviceName     string   `json:"device_name" jsonschema:"The device: the GNS3 node's name (as in the topology) or its node_id."`
	ConfigCommands []string `json:"config_commands"`
}

func (d configDevice) name() string    { return d.DeviceName }
func (d configDevice) lines() []string { return d.ConfigCommands }

// deviceConfigCommandsSpec is execute_multiple_device_config_commands:
// configuration lines, sent between "configure terminal" and "end".
func deviceConfigCommandsSpec(t texts) *spec {
	sp := toolkit.Define(ToolDeviceConfigCommands,
		"Configure lab devices (Cisco IOS) through their consoles. "+t.devices+
			"The tool enters configuration mode (configure terminal) and leaves it (end) itself: give only the configuration lines, "+
			"in order, for example [\"interface GigabitEthernet0/0\", \"ip address 10.0.0.1 255.255.255.0\", \"no shutdown\"]. "+
			"To change interface, just give the next interface line (exit is blocked). A banner may span several items or one item "+
			"with newlines: \"banner motd ^\", text lines, \"^\". A line the device rejects (% Invalid input) is reported and the others "+
			"are still applied; the device always ends at its privileged prompt. Exec commands run from configuration mode with \"do\", "+
			"for example \"do write memory\" last to save the configuration. "+t.safety+t.answer,
		deviceSchema("config_commands", "The configuration lines, in order.", "One configuration line (or several separated by newlines)."),
		func(ctx context.Context, c *call, a devicesArgs[configDevice]) toolkit.Report[deviceResult] {
			return c.execute(ctx, kindConfig, a.devices())
		})
	sp.SideEffects, sp.Tier = true, agent.TierConfigure
	return sp
}
