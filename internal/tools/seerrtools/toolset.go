package seerrtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"agentchat/internal/agent"
	"agentchat/internal/seerr"
	"agentchat/internal/tools/toolkit"
)

// Tool names of the Seerr skill.
const (
	ToolSearchMedia     = "search_media"
	ToolGetMediaDetails = "get_media_details"
	ToolRequestMedia    = "request_media"
	ToolListRequests    = "list_requests"
	ToolGetTrending     = "get_trending"
)

// Limits and defaults of the tool arguments and answers.
const (
	maxPage         = 500 // TMDB serves at most 500 pages
	defaultTake     = 10
	maxTake         = 20
	overviewChars   = 200
	titleFetchers   = 4
	knownForEntries = 3
)

// ErrNotConfigured is the error of every tool when Seerr is not
// configured (no SEERR_URL).
var ErrNotConfigured = seerr.ErrNotConfigured

const skillPrompt = `Media requests through Seerr (Overseerr/Jellyseerr), which adds titles to the media library.
- Find titles with search_media (get_trending for ideas). Each movie or show comes with its TMDB id and its status: not_requested, pending, processing, partially_available or available.
- get_media_details gives one title in detail; for a show it lists the seasons and the status of each.
- Call request_media only when the user asked for that title. If several titles or years match, ask which one first. For a show, request the seasons the user named, or all seasons when none were named.
- Never request a title the tools report as already available or already requested: say so instead. request_media checks this too and tells you.
- list_requests shows existing requests and their approval status.
Refer to titles by name and year; mention TMDB ids only when useful.`

// spec is one Seerr tool; its calls run on the client.
type spec = toolkit.Def[*seerr.Client]

// Skill returns the Seerr skill of the media agent: search_media,
// get_media_details, request_media, list_requests and get_trending. With a
// nil or unconfigured client the tools exist but return ErrNotConfigured.
func Skill(c *seerr.Client) agent.Skill {
	set := &toolkit.Set[*seerr.Client]{
		Defs: []*spec{
			searchMediaSpec(),
			mediaDetailsSpec(),
			requestMediaSpec(),
			listRequestsSpec(),
			trendingSpec(),
		},
		Configured:    c.Configured(),
		NotConfigured: ErrNotConfigured,
		Begin:         func(context.Context, toolkit.Call) *seerr.Client { return c },
	}
	tools := set.Tools()
	for i := range tools {
		tools[i].Run = named(tools[i].Name, tools[i].Run)
	}
	return agent.Skill{Name: "seerr", Prompt: skillPrompt, Tools: tools}
}

// named puts the tool's name before the errors of run, but for
// ErrNotConfigured, which is said as it is.
func named(name string, run func(context.Context, json.RawMessage) (string, error)) func(context.Context, json.RawMessage) (string, error) {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		out, err := run(ctx, args)
		if err != nil && !errors.Is(err, ErrNotConfigured) {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return out, err
	}
}
