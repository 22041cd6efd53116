package seerrtools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/seerr"
	"agentchat/internal/tools/toolkit"
)

// searchArgs are the arguments of search_media.
type searchArgs struct {
	Query string `json:"query" jsonschema:"Title or person to search for, e.g. \"The Matrix\"."`
	pageArg
}

func searchMediaSpec() *spec {
	return toolkit.DefineFunc(ToolSearchMedia,
		"Search movies, TV shows and people in Seerr by title or name. Returns TMDB ids, years and whether each title is already available or requested.",
		func(s *jsonschema.Schema) {
			toolkit.NonEmpty(s, "query")
			boundPage(s)
		}, searchMedia)
}

func searchMedia(ctx context.Context, c *seerr.Client, a searchArgs) (pageOut, error) {
	query := strings.TrimSpace(a.Query)
	if query == "" {
		return pageOut{}, errors.New("invalid arguments: query is required")
	}
	res, err := c.Search(ctx, query, a.page(), "")
	if err != nil {
		return pageOut{}, err
	}
	out := newPageOut(res)
	out.Query = query
	if len(out.Results) == 0 {
		out.Message = fmt.Sprintf("No results for %q.", query)
	}
	return out, nil
}
