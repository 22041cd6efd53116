package gns3

import (
	"context"
	"fmt"
	"net/http"
)

// ListProjects returns the projects the user may see (GET /v3/projects).
func (c *Client) ListProjects(ctx context.Context, token string) ([]Project, error) {
	out := []Project{}
	if err := c.Do(ctx, token, http.MethodGet, "/v3/projects", nil, &out); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// GetTemplates returns the templates the user may see (GET /v3/templates).
func (c *Client) GetTemplates(ctx context.Context, token string) ([]Template, error) {
	out := []Template{}
	if err := c.Do(ctx, token, http.MethodGet, "/v3/templates", nil, &out); err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	return out, nil
}

// CreateNodeFromTemplate adds a node made from a template to the project
// at (x, y) on computeID ("" means "local"): POST
// /v3/projects/{p}/templates/{t} {"x", "y", "compute_id"}. GNS3 answers 201
// with the node, which is returned. An unknown template is an ErrNotFound
// that is not ErrProjectNotFound.
func (c *Client) CreateNodeFromTemplate(ctx context.Context, token, projectID, templateID string, x, y int, computeID string) (*Node, error) {
	p, err := itemPath(projectID, "templates", "template", templateID)
	if err != nil {
		return nil, err
	}
	if computeID == "" {
		computeID = "local"
	}
	in := struct {
		X         int    `json:"x"`
		Y         int    `json:"y"`
		ComputeID string `json:"compute_id"`
	}{x, y, computeID}
	var out Node
	if err := c.Do(ctx, token, http.MethodPost, p, in, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// GetNode returns one node (GET /v3/projects/{p}/nodes/{n}).
func (c *Client) GetNode(ctx context.Context, token, projectID, nodeID string) (*Node, error) {
	p, err := itemPath(projectID, "nodes", "node", nodeID)
	if err != nil {
		return nil, err
	}
	var out Node
	if err := c.Do(ctx, token, http.MethodGet, p, nil, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// UpdateNode changes the given fields of a node (PUT
// /v3/projects/{p}/nodes/{n}, for example {"name": "R1"}) and returns the
// node as GNS3 answers it.
func (c *Client) UpdateNode(ctx context.Context, token, projectID, nodeID string, fields map[string]any) (*Node, error) {
	p, err := itemPath(projectID, "nodes", "node", nodeID)
	if err != nil {
		return nil, err
	}
	if fields == nil {
		fields = map[string]any{}
	}
	var out Node
	if err := c.Do(ctx, token, http.MethodPut, p, fields, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// DeleteNode removes a node and its links (DELETE
// /v3/projects/{p}/nodes/{n}, 204).
func (c *Client) DeleteNode(ctx context.Context, token, projectID, nodeID string) error {
	p, err := itemPath(projectID, "nodes", "node", nodeID)
	if err != nil {
		return err
	}
	if err := c.Do(ctx, token, http.MethodDelete, p, nil, nil); err != nil {
		return itemErr(projectID, err)
	}
	return nil
}

// NodeAction asks GNS3 to start, stop or suspend a node (POST
// /v3/projects/{p}/nodes/{n}/{action}; GNS3 v3 answers 204). It returns
// once GNS3 accepted the request: the node may reach the new status
// later (poll GetNode). Any action other than NodeActionStart,
// NodeActionStop and NodeActionSuspend is an error, and no request is sent.
func (c *Client) NodeAction(ctx context.Context, token, projectID, nodeID, action string) error {
	switch action {
	case NodeActionStart, NodeActionStop, NodeActionSuspend:
	default:
		return &actionError{action: shorten(action)}
	}
	p, err := itemPath(projectID, "nodes", "node", nodeID)
	if err != nil {
		return err
	}
	if err := c.Do(ctx, token, http.MethodPost, p+"/"+action, nil, nil); err != nil {
		return itemErr(projectID, err)
	}
	return nil
}

// CreateLink connects two node ports (POST /v3/projects/{p}/links with
// {"nodes": [a, b]}, only node_id, adapter_number and port_number of each
// end being sent) and returns the link GNS3 created (201).
func (c *Client) CreateLink(ctx context.Context, token, projectID string, a, b LinkEnd) (*Link, error) {
	p, err := projectPath(projectID)
	if err != nil {
		return nil, err
	}
	type end struct {
		NodeID        string `json:"node_id"`
		AdapterNumber int    `json:"adapter_number"`
		PortNumber    int    `json:"port_number"`
	}
	ends := make([]end, 0, 2)
	for _, e := range []LinkEnd{a, b} {
		if !ValidID(e.NodeID) {
			return nil, &invalidIDError{kind: "node", id: shorten(e.NodeID)}
		}
		ends = append(ends, end{e.NodeID, e.AdapterNumber, e.PortNumber})
	}
	in := struct {
		Nodes []end `json:"nodes"`
	}{ends}
	var out Link
	if err := c.Do(ctx, token, http.MethodPost, p+"/links", in, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// DeleteLink removes a link (DELETE /v3/projects/{p}/links/{l}, 204).
func (c *Client) DeleteLink(ctx context.Context, token, projectID, linkID string) error {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return err
	}
	if err := c.Do(ctx, token, http.MethodDelete, p, nil, nil); err != nil {
		return itemErr(projectID, err)
	}
	return nil
}
