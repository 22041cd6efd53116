package gns3tools

import (
	"agentchat/internal/agent"
	"agentchat/internal/gns3"
)

// suspendAction is suspend_gns3_node.
var suspendAction = nodeAction{
	tool:   ToolSuspendNode,
	action: gns3.NodeActionSuspend,
	target: gns3.NodeSuspended,
	tier:   agent.TierDestructive,
	verb:   "suspend",
	description: "Suspend (pause) started nodes (1 to 50 per call) and wait until each is suspended; start_gns3_node resumes them. " +
		"Only some node types can be suspended (Qemu, Dynamips, Docker, VirtualBox, VMware). Each result gives the node's status.",
}
