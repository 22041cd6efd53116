package seerrtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/seerr"
	"agentchat/internal/tools/toolkit"
)

// requestArgs are the arguments of request_media. Seasons is an array of
// season numbers or "all", as the schema says; parseSeasons reads it.
type requestArgs struct {
	mediaArgs
	Seasons json.RawMessage `json:"seasons,omitempty" jsonschema:"TV only: the season numbers to request, or \"all\" (the default for TV)."`
}

// requestResult is the answer of request_media.
type requestResult struct {
	Result            string `json:"result"`
	MediaType         string `json:"media_type"`
	TMDBID            int    `json:"tmdb_id"`
	Title             string `json:"title"`
	Year              string `json:"year,omitempty"`
	RequestID         int    `json:"request_id,omitempty"`
	RequestStatus     string `json:"request_status,omitempty"`
	RequestedBy       string `json:"requested_by,omitempty"`
	SeasonsRequested  []int  `json:"seasons_requested,omitempty"`
	AvailableSeasons  []int  `json:"already_available_seasons,omitempty"`
	RequestedSeasons  []int  `json:"already_requested_seasons,omitempty"`
	AllSeasonsRequest bool   `json:"all_seasons,omitempty"`
	Message           string `json:"message"`
}

// Results of request_media.
const (
	resultRequested        = "requested"
	resultAlreadyAvailable = "already_available"
	resultAlreadyRequested = "already_requested"
)

func requestMediaSpec() *spec {
	sp := toolkit.DefineFunc(ToolRequestMedia,
		"Request a movie or TV show (some or all seasons) so it is added to the library. Does nothing, and says so, when the title is already available or already requested.",
		func(s *jsonschema.Schema) {
			boundMedia(s)
			p := s.Properties["seasons"]
			*p = jsonschema.Schema{
				Description: p.Description,
				AnyOf: []*jsonschema.Schema{
					{Type: "array", Items: &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0)}, MinItems: jsonschema.Ptr(1)},
					{Type: "string", Enum: []any{"all"}},
				},
			}
		}, requestMedia)
	// It changes the media library, not a lab: its Tier stays
	// agent.TierRead, and no approval policy of the lab tools stops it.
	sp.SideEffects = true
	return sp
}

func requestMedia(ctx context.Context, c *seerr.Client, a requestArgs) (requestResult, error) {
	if a.MediaType == seerr.MediaMovie {
		if s := bytes.TrimSpace(a.Seasons); len(s) > 0 && string(s) != "null" {
			return requestResult{}, errors.New("invalid arguments: seasons apply to TV shows only")
		}
		return requestMovie(ctx, c, a.TMDBID)
	}
	all, seasons, err := parseSeasons(a.Seasons)
	if err != nil {
		return requestResult{}, err
	}
	return requestTV(ctx, c, a.TMDBID, all, seasons)
}

func requestMovie(ctx context.Context, c *seerr.Client, id int) (requestResult, error) {
	m, err := c.Movie(ctx, id)
	if err != nil {
		return requestResult{}, err
	}
	res := requestResult{MediaType: seerr.MediaMovie, TMDBID: m.ID, Title: m.Title, Year: year(m.ReleaseDate)}
	name := label(m.Title, paren(res.Year))
	if mi := m.MediaInfo; mi != nil {
		switch {
		case mi.Status == seerr.StatusAvailable || mi.Status == seerr.StatusPartiallyAvailable:
			res.Result = resultAlreadyAvailable
			res.Message = name + " is already available in the library; nothing was requested."
			return res, nil
		case mi.Status == seerr.StatusPending || mi.Status == seerr.StatusProcessing || activeRequest(mi) != nil:
			return alreadyRequested(res, name, mi), nil
		}
	}
	created, err := c.CreateRequest(ctx, seerr.NewRequest{MediaType: seerr.MediaMovie, MediaID: m.ID})
	if errors.Is(err, seerr.ErrAlreadyRequested) {
		return alreadyRequested(res, name, m.MediaInfo), nil
	}
	if err != nil {
		return requestResult{}, err
	}
	res.Result = resultRequested
	res.RequestID, res.RequestStatus = created.ID, created.Status.String()
	res.Message = "Requested " + name + "; " + approvalText(created.Status)
	return res, nil
}

// alreadyRequested is res for a movie requested before, with the
// standing request.
func alreadyRequested(res requestResult, name string, mi *seerr.MediaInfo) requestResult {
	res.Result = resultAlreadyRequested
	state := "it is waiting for approval"
	if mi != nil && mi.Status == seerr.StatusProcessing {
		state = "it is approved and being downloaded"
	}
	if r := activeRequest(mi); r != nil {
		res.RequestID, res.RequestStatus, res.RequestedBy = r.ID, r.Status.String(), r.RequestedBy.Name()
		if r.Status == seerr.RequestApproved && (mi.Status != seerr.StatusProcessing) {
			state = "it is approved"
		}
		if res.RequestedBy != "" {
			state += " (requested by " + res.RequestedBy + ")"
		}
	}
	res.Message = name + " was already requested; " + state + ". Nothing new was requested."
	return res
}

// approvalText tells what became of a new request.
func approvalText(st seerr.RequestStatus) string {
	if st == seerr.RequestApproved {
		return "the request was approved automatically and the title will be downloaded."
	}
	return "the request is " + strings.ReplaceAll(st.String(), "_", " ") + "."
}
