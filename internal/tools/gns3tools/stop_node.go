package gns3tools

import (
	"agentchat/internal/agent"
	"agentchat/internal/gns3"
)

// stopAction is stop_gns3_node.
var stopAction = nodeAction{
	tool:   ToolStopNode,
	action: gns3.NodeActionStop,
	target: gns3.NodeStopped,
	tier:   agent.TierDestructive,
	verb:   "stop",
	description: "Stop nodes (1 to 50 per call; their running state is lost) and wait until each is stopped. " +
		"A node already stopped is left alone. Each result gives the node's status.",
}
