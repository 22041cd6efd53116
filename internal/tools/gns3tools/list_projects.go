package gns3tools

import (
	"context"
	"slices"
	"strings"

	"agentchat/internal/tools/toolkit"
)

// listProjectsArgs are the arguments of list_gns3_projects: none.
type listProjectsArgs struct{}

// listedProject is one project of list_gns3_projects. Its GNS3 status
// (opened, closed) is project_status: status is the item's.
type listedProject struct {
	ProjectID     string `json:"project_id,omitempty"`
	Name          string `json:"name,omitempty"`
	ProjectStatus string `json:"project_status,omitempty"`
	toolkit.Outcome
}

func listProjectsSpec() *spec {
	sp := toolkit.Define(ToolListProjects,
		"List the GNS3 projects the user may see: project_id, name and project_status (opened or closed). "+
			"The other GNS3 tools take the project_id of the project to act on.",
		nil, listProjects)
	sp.Global = true
	return sp
}

func listProjects(ctx context.Context, c *call, _ listProjectsArgs) toolkit.Report[listedProject] {
	var items []listedProject
	err := c.limit(ctx, func() error {
		ps, err := c.client.ListProjects(ctx, c.Token)
		for _, p := range ps {
			items = append(items, listedProject{ProjectID: p.ProjectID, Name: p.Name, ProjectStatus: p.Status})
		}
		return err
	})
	if err != nil {
		return toolkit.FailAll([]listedProject{{}}, "cannot list the projects: "+toolkit.Describe(err))
	}
	slices.SortStableFunc(items, func(a, b listedProject) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	for i := range items {
		items[i].Succeed()
	}
	return toolkit.Finish(items)
}
