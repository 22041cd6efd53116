package seerrtools

import (
	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/seerr"
)

// pageArg is the page argument of search_media and get_trending.
type pageArg struct {
	Page int `json:"page,omitempty" jsonschema:"Result page (20 results per page). Default 1."`
}

// page is the page asked for, 1 when none was.
func (a pageArg) page() int { return max(a.Page, 1) }

// boundPage bounds the page property of s to the pages TMDB serves.
func boundPage(s *jsonschema.Schema) {
	p := s.Properties["page"]
	p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxPage))
}

// mediaArgs name one title: the arguments of get_media_details, and the
// first ones of request_media.
type mediaArgs struct {
	MediaType string `json:"media_type" jsonschema:"movie or tv (a TV show)."`
	TMDBID    int    `json:"tmdb_id" jsonschema:"TMDB id, from search_media."`
}

// boundMedia limits media_type to movie and tv and tmdb_id to positive
// ids in s.
func boundMedia(s *jsonschema.Schema) {
	s.Properties["media_type"].Enum = []any{seerr.MediaMovie, seerr.MediaTV}
	s.Properties["tmdb_id"].Minimum = jsonschema.Ptr(1.0)
}
