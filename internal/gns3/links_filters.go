package gns3

import (
	"context"
	"net/http"
)

// LinkFilter is one packet filter a link supports (GET
// /v3/projects/{p}/links/{l}/available_filters): its type ("frequency_drop",
// "packet_loss", "delay", "corrupt", "bpf"), a readable name and what it
// does, and its parameters in order.
type LinkFilter struct {
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Parameters  []FilterParameter `json:"parameters"`
}

// FilterParameter is one value of a link filter: an "int" with its
// bounds and unit, or a "text" (the BPF expressions).
type FilterParameter struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Minimum *int   `json:"minimum,omitempty"`
	Maximum *int   `json:"maximum,omitempty"`
	Unit    string `json:"unit,omitempty"`
}

// GetLink returns one link (GET /v3/projects/{p}/links/{l}): its ends,
// filters, suspension and capture state.
func (c *Client) GetLink(ctx context.Context, token, projectID, linkID string) (*Link, error) {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return nil, err
	}
	var out Link
	if err := c.Do(ctx, token, http.MethodGet, p, nil, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// AvailableFilters returns the filters the link supports (GET
// /v3/projects/{p}/links/{l}/available_filters); none when neither end
// runs on an emulator that applies filters (GNS3 answers []).
func (c *Client) AvailableFilters(ctx context.Context, token, projectID, linkID string) ([]LinkFilter, error) {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return nil, err
	}
	out := []LinkFilter{}
	if err := c.Do(ctx, token, http.MethodGet, p+"/available_filters", nil, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return out, nil
}

// UpdateLink changes the given fields of a link (PUT
// /v3/projects/{p}/links/{l}, for example {"filters": {"packet_loss":
// [10]}}; GNS3 drops a filter whose first value is 0 or "") and returns
// the link as GNS3 answers it.
func (c *Client) UpdateLink(ctx context.Context, token, projectID, linkID string, fields map[string]any) (*Link, error) {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return nil, err
	}
	if fields == nil {
		fields = map[string]any{}
	}
	var out Link
	if err := c.Do(ctx, token, http.MethodPut, p, fields, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}
