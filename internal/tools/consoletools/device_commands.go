package consoletools

import (
	"context"

	"agentchat/internal/tools/toolkit"
)

// deviceCommandsSpec is execute_multiple_device_commands: read-only
// commands on any supported device.
func deviceCommandsSpec(t texts) *spec {
	return toolkit.Define(ToolDeviceCommands,
		"Run read-only commands (show, ping) on the consoles of lab devices and return what each console shows. "+t.devices+
			"Commands run at the privileged prompt with paging off, one after the other, for example \"show ip interface brief\", "+
			"\"show running-config\", \"show ip route\", \"ping 10.0.0.2\". Only read-only commands are sent: on Cisco IOS show, ping, "+
			"traceroute, dir, more, pwd and terminal length|width (output modifiers begin, count, exclude, include, section), on VPCS "+
			"show and ping; anything else, configuration mode included, is refused (use "+ToolDeviceConfigCommands+"). "+t.safety+t.answer,
		deviceSchema("commands", "The commands to run, in order.", "One command, for example \"show ip interface brief\"."),
		func(ctx context.Context, c *call, a devicesArgs[commandsDevice]) toolkit.Report[deviceResult] {
			return c.execute(ctx, kindShow, a.devices())
		})
}
