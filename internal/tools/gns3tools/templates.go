package gns3tools

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"agentchat/internal/gns3"
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
	outcome
}

func templatesSpec() *spec {
	return define(ToolGetTemplates,
		"List the GNS3 templates nodes can be created from: template_id, name, template_type (vpcs, qemu, iou, dynamips, docker, ethernet_switch, ...), "+
			"category and whether it is built in. create_gns3_node takes a template by name or template_id.",
		nil, listTemplates)
}

func listTemplates(ctx context.Context, c *call, _ templatesArgs) report[templateItem] {
	ts, err := c.templates(ctx)
	if err != nil {
		return failAll([]templateItem{{}}, describe(err))
	}
	items := make([]templateItem, len(ts))
	for i, t := range ts {
		items[i] = templateItem{TemplateID: t.TemplateID, Name: t.Name, TemplateType: t.TemplateType, Category: t.Category, Builtin: t.Builtin}
		items[i].succeed()
	}
	return finish(items)
}

// templates reads the templates the user may use, sorted by name.
func (c *call) templates(ctx context.Context) ([]gns3.Template, error) {
	var ts []gns3.Template
	err := c.limit(ctx, func() (err error) {
		ts, err = c.client.GetTemplates(ctx, c.token)
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
	ref = strings.TrimSpace(ref)
	var exact, folded []*gns3.Template
	for i := range ts {
		switch {
		case ts[i].TemplateID == ref:
			return &ts[i], nil
		case ts[i].Name == ref:
			exact = append(exact, &ts[i])
		case strings.EqualFold(ts[i].Name, ref):
			folded = append(folded, &ts[i])
		}
	}
	if len(exact) == 1 {
		return exact[0], nil
	}
	if len(exact) == 0 && len(folded) == 1 {
		return folded[0], nil
	}
	if len(exact)+len(folded) > 1 {
		var names []string
		for _, t := range append(exact, folded...) {
			names = append(names, t.Name+" ("+t.TemplateID+")")
		}
		return nil, errorf("template '%s' is ambiguous: %s; use the template_id", ref, strings.Join(names, ", "))
	}
	names := make([]string, len(ts))
	for i := range ts {
		names[i] = ts[i].Name
	}
	if len(names) == 0 {
		return nil, errorf("template '%s' not found; no templates are available", ref)
	}
	return nil, errorf("template '%s' not found; templates: %s", ref, listNames(names))
}
