package gns3tools

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/tools/toolkit"
)

// deleteLinkArgs are the arguments of delete_gns3_link.
type deleteLinkArgs struct {
	Links []string `json:"links" jsonschema:"The link_id of each link to delete (1 to 50), as listed in the topology."`
}

// deletedLink is the result of deleting one link.
type deletedLink struct {
	LinkID string `json:"link_id"`
	toolkit.Outcome
}

func deleteLinkSpec() *spec {
	sp := toolkit.Define(ToolDeleteLink,
		"Delete links of the GNS3 project by link_id (1 to 50 per call); the ports they used become free.",
		func(s *jsonschema.Schema) {
			p := toolkit.Array(s, "links", 1, maxLinks)
			p.UniqueItems = true
			p.Items.Pattern = toolkit.UUIDPattern
		}, deleteLinks)
	sp.SideEffects, sp.Tier = true, agent.TierDestructive
	return sp
}

func deleteLinks(ctx context.Context, c *call, a deleteLinkArgs) toolkit.Report[deletedLink] {
	items := make([]deletedLink, len(a.Links))
	toolkit.ForEach(len(items), func(i int) {
		items[i].LinkID = a.Links[i]
		err := c.limit(ctx, func() error {
			return c.client.DeleteLink(ctx, c.Token, c.ProjectID, a.Links[i])
		})
		if err != nil {
			items[i].FailErr(err)
			return
		}
		items[i].Succeed()
	})
	return toolkit.Finish(items)
}
