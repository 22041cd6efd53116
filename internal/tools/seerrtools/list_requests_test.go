package seerrtools

import (
	"slices"
	"strings"
	"testing"

	"agentchat/internal/seerr/seerrtest"
)

func TestListRequestsTool(t *testing.T) {
	_, c := newFake(t)
	tl := tools(t, c)
	type listed struct {
		ID            int    `json:"id"`
		MediaType     string `json:"media_type"`
		TMDBID        int    `json:"tmdb_id"`
		Title         string `json:"title"`
		Year          string `json:"year"`
		RequestStatus string `json:"request_status"`
		MediaStatus   string `json:"media_status"`
		Seasons       []int  `json:"seasons"`
		RequestedBy   string `json:"requested_by"`
		CreatedAt     string `json:"created_at"`
	}
	var out struct {
		Filter   string   `json:"filter"`
		Page     int      `json:"page"`
		Pages    int      `json:"pages"`
		Total    int      `json:"total"`
		Requests []listed `json:"requests"`
		Message  string   `json:"message"`
	}
	mustCall(t, tl, ToolListRequests, `{}`, &out)
	if out.Filter != "all" || out.Total != 5 || len(out.Requests) != 5 {
		t.Fatalf("out = %+v", out)
	}
	want := listed{ID: 5, MediaType: "movie", TMDBID: seerrtest.TheMatrix, Title: "The Matrix", Year: "1999", RequestStatus: "pending_approval",
		MediaStatus: "pending", RequestedBy: "alice", CreatedAt: "2024-11-02T19:22:10.000Z"}
	if got := out.Requests[0]; got.ID != want.ID || got.Title != want.Title || got.Year != want.Year || got.RequestStatus != want.RequestStatus ||
		got.MediaStatus != want.MediaStatus || got.RequestedBy != want.RequestedBy || got.CreatedAt != want.CreatedAt || got.TMDBID != want.TMDBID {
		t.Fatalf("first = %+v, want %+v", got, want)
	}
	if got := out.Requests[1]; got.Title != "Stranger Things" || got.MediaType != "tv" || !slices.Equal(got.Seasons, []int{4}) ||
		got.MediaStatus != "partially_available" {
		t.Fatalf("second = %+v", got)
	}
	if got := out.Requests[3]; got.Title != "Interstellar" || got.RequestStatus != "declined" {
		t.Fatalf("declined = %+v", got)
	}

	mustCall(t, tl, ToolListRequests, `{"filter":"pending","take":1}`, &out)
	if out.Total != 2 || out.Pages != 2 || len(out.Requests) != 1 || out.Requests[0].Title != "The Matrix" {
		t.Fatalf("pending = %+v", out)
	}
	mustCall(t, tl, ToolListRequests, `{"filter":"pending","take":1,"skip":1}`, &out)
	if out.Page != 2 || len(out.Requests) != 1 || out.Requests[0].Title != "Stranger Things" {
		t.Fatalf("pending page 2 = %+v", out)
	}
	mustCall(t, tl, ToolListRequests, `{"filter":"failed"}`, &out)
	if len(out.Requests) != 0 || out.Requests == nil || !strings.Contains(out.Message, "No requests") {
		t.Fatalf("failed = %+v", out)
	}
}
