package seerrtools

import (
	"context"

	"agentchat/internal/seerr"
	"agentchat/internal/tools/toolkit"
)

// requestOut is a request of a title, in its details.
type requestOut struct {
	ID          int    `json:"id"`
	Status      string `json:"status"`
	Seasons     []int  `json:"seasons,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
	CreatedAt   string `json:"created_at,omitempty"`
	FourK       bool   `json:"is_4k,omitempty"`
}

// seasonOut is a season of a show, in its details.
type seasonOut struct {
	SeasonNumber int    `json:"season_number"`
	Name         string `json:"name,omitempty"`
	Episodes     int    `json:"episodes"`
	AirDate      string `json:"air_date,omitempty"`
	Status       string `json:"status"`
}

// detailsOut is the answer of get_media_details.
type detailsOut struct {
	MediaType       string       `json:"media_type"`
	TMDBID          int          `json:"tmdb_id"`
	Title           string       `json:"title"`
	Year            string       `json:"year,omitempty"`
	ReleaseDate     string       `json:"release_date,omitempty"`
	FirstAirDate    string       `json:"first_air_date,omitempty"`
	RuntimeMinutes  int          `json:"runtime_minutes,omitempty"`
	ShowStatus      string       `json:"show_status,omitempty"`
	NumberOfSeasons int          `json:"number_of_seasons,omitempty"`
	Genres          []string     `json:"genres,omitempty"`
	Overview        string       `json:"overview,omitempty"`
	Status          string       `json:"status"`
	Note            string       `json:"note,omitempty"`
	Seasons         []seasonOut  `json:"seasons,omitempty"`
	Requests        []requestOut `json:"requests,omitempty"`
}

func mediaDetailsSpec() *spec {
	return toolkit.DefineFunc(ToolGetMediaDetails,
		"Details of one movie or TV show by TMDB id: overview, runtime or seasons with episode counts, availability and existing requests.",
		boundMedia, mediaDetails)
}

func mediaDetails(ctx context.Context, c *seerr.Client, a mediaArgs) (detailsOut, error) {
	if a.MediaType == seerr.MediaMovie {
		m, err := c.Movie(ctx, a.TMDBID)
		if err != nil {
			return detailsOut{}, err
		}
		st, note := availability(m.MediaInfo)
		return detailsOut{
			MediaType: seerr.MediaMovie, TMDBID: m.ID, Title: m.Title, Year: year(m.ReleaseDate),
			ReleaseDate: m.ReleaseDate, RuntimeMinutes: m.Runtime, Genres: genreNames(m.Genres),
			Overview: m.Overview, Status: st, Note: note, Requests: requestsOf(m.MediaInfo),
		}, nil
	}
	t, err := c.TV(ctx, a.TMDBID)
	if err != nil {
		return detailsOut{}, err
	}
	st, note := availability(t.MediaInfo)
	states := seasonStates(t)
	out := detailsOut{
		MediaType: seerr.MediaTV, TMDBID: t.ID, Title: t.Name, Year: year(t.FirstAirDate),
		FirstAirDate: t.FirstAirDate, ShowStatus: t.Status, NumberOfSeasons: t.NumberOfSeasons,
		Genres: genreNames(t.Genres), Overview: t.Overview, Status: st, Note: note,
		Requests: requestsOf(t.MediaInfo),
	}
	for _, sn := range t.Seasons {
		out.Seasons = append(out.Seasons, seasonOut{
			SeasonNumber: sn.SeasonNumber, Name: sn.Name, Episodes: sn.EpisodeCount,
			AirDate: sn.AirDate, Status: states[sn.SeasonNumber].String(),
		})
	}
	return out, nil
}

// requestsOf are the requests of a title.
func requestsOf(mi *seerr.MediaInfo) []requestOut {
	if mi == nil {
		return nil
	}
	var out []requestOut
	for _, r := range mi.Requests {
		out = append(out, requestOut{
			ID: r.ID, Status: r.Status.String(), Seasons: seasonNumbers(r.Seasons),
			RequestedBy: r.RequestedBy.Name(), CreatedAt: r.CreatedAt, FourK: r.Is4K,
		})
	}
	return out
}

// seasonNumbers are the numbers of the seasons of a request.
func seasonNumbers(ss []seerr.SeasonRequest) []int {
	var out []int
	for _, s := range ss {
		out = append(out, s.SeasonNumber)
	}
	return out
}

// genreNames are the names of genres.
func genreNames(gs []seerr.Genre) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}
