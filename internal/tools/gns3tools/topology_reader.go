package gns3tools

import (
	"context"

	"agentchat/internal/tools/gns3topo"
	"agentchat/internal/tools/toolkit"
)

// topologyArgs are the arguments of gns3_topology_reader: none.
type topologyArgs struct{}

// topologyItem is the one result of gns3_topology_reader: the project's
// topology, freshly read.
type topologyItem struct {
	*gns3topo.Topology
	toolkit.Outcome
}

func topologyReaderSpec() *spec {
	return toolkit.Define(ToolTopologyReader,
		"Read the current topology of the GNS3 project: every node (node_id, name, node_type, status, console, ports with their names) "+
			"and every link (link_id and the node and port at each end). Use it to check the lab after changes or before naming nodes and ports.",
		nil, readTopology)
}

func readTopology(ctx context.Context, c *call, _ topologyArgs) toolkit.Report[topologyItem] {
	items := []topologyItem{{}}
	topo, err := c.topo.Fetch(ctx, c.ProjectID)
	if err != nil {
		items[0].FailErr(err)
		return toolkit.Finish(items)
	}
	items[0].Topology = &topo
	items[0].Succeed()
	return toolkit.Finish(items)
}
