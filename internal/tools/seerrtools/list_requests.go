package seerrtools

import (
	"cmp"
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/seerr"
	"agentchat/internal/tools/toolkit"
)

// listArgs are the arguments of list_requests.
type listArgs struct {
	Filter string `json:"filter,omitempty" jsonschema:"Which requests to list. Default all."`
	Take   int    `json:"take,omitempty" jsonschema:"How many requests to list. Default 10."`
	Skip   int    `json:"skip,omitempty" jsonschema:"How many of the newest requests to skip (paging). Default 0."`
}

// listedRequest is a request as list_requests shows it.
type listedRequest struct {
	ID            int    `json:"id"`
	MediaType     string `json:"media_type"`
	TMDBID        int    `json:"tmdb_id"`
	Title         string `json:"title,omitempty"`
	Year          string `json:"year,omitempty"`
	RequestStatus string `json:"request_status"`
	MediaStatus   string `json:"media_status"`
	Seasons       []int  `json:"seasons,omitempty"`
	FourK         bool   `json:"is_4k,omitempty"`
	RequestedBy   string `json:"requested_by,omitempty"`
	CreatedAt     string `json:"created_at,omitempty"`
}

// listOut is the answer of list_requests.
type listOut struct {
	Filter   string          `json:"filter"`
	Page     int             `json:"page"`
	Pages    int             `json:"pages"`
	Total    int             `json:"total"`
	Requests []listedRequest `json:"requests"`
	Message  string          `json:"message,omitempty"`
}

func listRequestsSpec() *spec {
	return toolkit.DefineFunc(ToolListRequests,
		"List media requests with their approval status, the title's availability, who asked and when.",
		func(s *jsonschema.Schema) {
			for _, f := range seerr.RequestFilters() {
				s.Properties["filter"].Enum = append(s.Properties["filter"].Enum, f)
			}
			take := s.Properties["take"]
			take.Minimum, take.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxTake))
			s.Properties["skip"].Minimum = jsonschema.Ptr(0.0)
		}, listRequests)
}

func listRequests(ctx context.Context, c *seerr.Client, a listArgs) (listOut, error) {
	filter := cmp.Or(a.Filter, "all")
	page, err := c.Requests(ctx, seerr.RequestQuery{Take: cmp.Or(a.Take, defaultTake), Skip: a.Skip, Filter: filter, Sort: "added"})
	if err != nil {
		return listOut{}, err
	}
	out := listOut{Filter: filter, Page: page.PageInfo.Page, Pages: page.PageInfo.Pages, Total: page.PageInfo.Results, Requests: []listedRequest{}}
	for _, r := range page.Results {
		out.Requests = append(out.Requests, listed(r))
	}
	addTitles(ctx, c, out.Requests)
	if len(out.Requests) == 0 {
		out.Message = fmt.Sprintf("No requests match the filter %q.", filter)
	}
	return out, nil
}

// listed is r as list_requests shows it, without its title.
func listed(r seerr.Request) listedRequest {
	lr := listedRequest{
		ID: r.ID, MediaType: r.Type, RequestStatus: r.Status.String(), Seasons: seasonNumbers(r.Seasons),
		FourK: r.Is4K, RequestedBy: r.RequestedBy.Name(), CreatedAt: r.CreatedAt,
		MediaStatus: seerr.StatusUnknown.String(),
	}
	if r.Media != nil {
		lr.TMDBID = r.Media.TMDBID
		if lr.MediaType == "" {
			lr.MediaType = r.Media.MediaType
		}
		st := r.Media.Status
		if r.Is4K {
			st = r.Media.Status4K
		}
		lr.MediaStatus = st.String()
	}
	return lr
}
