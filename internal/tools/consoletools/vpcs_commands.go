package consoletools

import (
	"context"
	"fmt"

	"agentchat/internal/agent"
	"agentchat/internal/tools/toolkit"
)

// vpcsCommandsSpec is execute_vpcs_commands: any command on VPCS nodes.
func vpcsCommandsSpec(t texts) *spec {
	sp := toolkit.Define(ToolVPCSCommands,
		"Run commands on VPCS PCs of the lab (GNS3 nodes of type vpcs) through their consoles, for example "+
			"\"ip 10.0.0.1/24 10.0.0.254\" (address/prefix and gateway), \"ip dhcp\", \"show ip\", \"ping 10.0.0.254\", \"save\". "+
			fmt.Sprintf("Up to %d PCs run in parallel, up to %d commands each. ", maxDevices, maxCommands)+t.safety+t.answer,
		deviceSchema("commands", "The VPCS commands to run, in order.", "One VPCS command, for example \"show ip\"."),
		func(ctx context.Context, c *call, a devicesArgs[commandsDevice]) toolkit.Report[deviceResult] {
			return c.execute(ctx, kindVPCS, a.devices())
		})
	sp.SideEffects, sp.Tier = true, agent.TierConfigure
	return sp
}
