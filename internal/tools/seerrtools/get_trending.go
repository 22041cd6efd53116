package seerrtools

import (
	"context"

	"agentchat/internal/seerr"
	"agentchat/internal/tools/toolkit"
)

// trendingArgs are the arguments of get_trending.
type trendingArgs struct {
	pageArg
}

func trendingSpec() *spec {
	return toolkit.DefineFunc(ToolGetTrending,
		"Trending movies and TV shows, with their availability in the library.",
		boundPage, trending)
}

func trending(ctx context.Context, c *seerr.Client, a trendingArgs) (pageOut, error) {
	res, err := c.Trending(ctx, a.page(), "")
	if err != nil {
		return pageOut{}, err
	}
	out := newPageOut(res)
	if len(out.Results) == 0 {
		out.Message = "Nothing is trending on this page."
	}
	return out, nil
}
