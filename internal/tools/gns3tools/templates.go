package gns3tools

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// templatesArgs are the arguments of get_gns3_templates: none.
type templatesArgs struct{}

// templateItem is one template of get_gns3_templates.
type templateItem struct {
	TemplateID   string `json:"template_id,omitempty"`
	Name         string `json:"name,omitempty"`
	TemplateType string `json:"template_type,omitempty"`
	Category     string `json:"category,omitempty"`
	Builtin      bool   `json:"builtin"`
	toolkit.Outcome
}

func templatesSpec() *spec {
	return toolkit.Define(ToolGetTemplates,
		"List the GNS3 templates nodes can be created from: template_id, name, template_type (vpcs, qemu, iou, dynamips, docker, ethernet_switch, ...), "+
			"category and whether it is built in. create_gns3_node takes a template by name or template_id.",
		nil, listTemplates)
}

func listTemplates(ctx context.Context, c *call, _ templatesArgs) toolkit.Report[templateItem] {
	ts, err := c.templates(ctx)
	if err != nil {
		return toolkit.FailAll([]templateItem{{}}, toolkit.Describe(err))
	}
	items := make([]templateItem, len(ts))
	for i, t := range ts {
		items[i] = templateItem{TemplateID: t.TemplateID, Name: t.Name, TemplateType: t.TemplateType, Category: t.Category, Builtin: t.Builtin}
		items[i].Succeed()
	}
	return toolkit.Finish(items)
}

// templates reads the templates the user may use, sorted by name.
func (c *call) templates(ctx context.Context) ([]gns3.Template, error) {
	var ts []gns3.Template
	err := c.limit(ctx, func() (err error) {
		ts, err = c.client.GetTemplates(ctx, c.Token)
		return err
	})
	slices.SortStableFunc(ts, func(a, b gns3.Template) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.TemplateID, b.TemplateID))
	})
	return ts, err
}

// resolveTemplate finds the template ref names: the template_id, else the
// exact name, else the one name equal to it case-insensitively.
func resolveTemplate(ts []gns3.Template, ref string) (*gns3.Template, error) {
	return toolkit.Resolve(ts, toolkit.TemplateKind,
		func(t *gns3.Template) string { return t.TemplateID }, func(t *gns3.Template) string { return t.Name }, ref)
}
