package seerrtools

import (
	"slices"
	"strings"
	"testing"
)

func TestGetMediaDetailsTool(t *testing.T) {
	_, c := newFake(t)
	tl := tools(t, c)

	var movie struct {
		Title          string   `json:"title"`
		Year           string   `json:"year"`
		RuntimeMinutes int      `json:"runtime_minutes"`
		Genres         []string `json:"genres"`
		Status         string   `json:"status"`
		Note           string   `json:"note"`
		Requests       []struct {
			Status      string `json:"status"`
			RequestedBy string `json:"requested_by"`
		} `json:"requests"`
	}
	mustCall(t, tl, ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":872585}`, &movie)
	if movie.Title != "Oppenheimer" || movie.Year != "2023" || movie.RuntimeMinutes != 181 || movie.Status != "processing" ||
		!strings.Contains(movie.Note, "being downloaded") || len(movie.Requests) != 1 || movie.Requests[0].Status != "approved" ||
		movie.Requests[0].RequestedBy != "bob" || !slices.Equal(movie.Genres, []string{"Drama", "History"}) {
		t.Fatalf("movie = %+v", movie)
	}

	var tv struct {
		Title           string `json:"title"`
		NumberOfSeasons int    `json:"number_of_seasons"`
		ShowStatus      string `json:"show_status"`
		Status          string `json:"status"`
		Seasons         []struct {
			SeasonNumber int    `json:"season_number"`
			Episodes     int    `json:"episodes"`
			Status       string `json:"status"`
		} `json:"seasons"`
	}
	raw := mustCall(t, tl, ToolGetMediaDetails, `{"media_type":"tv","tmdb_id":66732}`, &tv)
	if !strings.Contains(raw, `"Sci-Fi & Fantasy"`) || strings.Contains(raw, "\n") {
		t.Fatalf("output not compact plain JSON: %s", raw)
	}
	var states []string
	for _, s := range tv.Seasons {
		states = append(states, s.Status)
	}
	if tv.Title != "Stranger Things" || tv.NumberOfSeasons != 5 || tv.ShowStatus != "Ended" || tv.Status != "partially_available" ||
		!slices.Equal(states, []string{"available", "available", "available", "pending", "not_requested"}) || tv.Seasons[3].Episodes != 9 {
		t.Fatalf("tv = %+v", tv)
	}

	_, err := call(t, tl, ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":99999999}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.HasPrefix(err.Error(), ToolGetMediaDetails+": ") {
		t.Fatalf("missing movie: %v", err)
	}
}
