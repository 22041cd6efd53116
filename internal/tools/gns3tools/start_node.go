package gns3tools

import (
	"agentchat/internal/agent"
	"agentchat/internal/gns3"
)

// startAction is start_gns3_node.
var startAction = nodeAction{
	tool:   ToolStartNode,
	action: gns3.NodeActionStart,
	target: gns3.NodeStarted,
	tier:   agent.TierBuild,
	verb:   "start",
	description: "Start nodes (1 to 50 per call; a suspended node resumes) and wait until each is started: seconds for VPCS and switches, " +
		"up to minutes for routers and virtual machines. A node already started is left alone. Each result gives the node's status.",
}
