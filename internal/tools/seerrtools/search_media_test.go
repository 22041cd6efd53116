package seerrtools

import (
	"slices"
	"strings"
	"testing"

	"agentchat/internal/seerr/seerrtest"
)

type searchOut struct {
	Query        string `json:"query"`
	Page         int    `json:"page"`
	TotalResults int    `json:"total_results"`
	Results      []struct {
		MediaType string   `json:"media_type"`
		TMDBID    int      `json:"tmdb_id"`
		Title     string   `json:"title"`
		Year      string   `json:"year"`
		Status    string   `json:"status"`
		Note      string   `json:"note"`
		Overview  string   `json:"overview"`
		KnownFor  []string `json:"known_for"`
	} `json:"results"`
	Message string `json:"message"`
}

func TestSearchMediaTool(t *testing.T) {
	_, c := newFake(t)
	tl := tools(t, c)

	var out searchOut
	mustCall(t, tl, ToolSearchMedia, `{"query":"matrix"}`, &out)
	if out.TotalResults != 2 || len(out.Results) != 2 {
		t.Fatalf("out = %+v", out)
	}
	m := out.Results[0]
	if m.Title != "The Matrix" || m.Year != "1999" || m.TMDBID != seerrtest.TheMatrix || m.Status != "pending" ||
		!strings.Contains(m.Note, "already requested") || !strings.HasPrefix(m.Overview, "Set in the 22nd century") {
		t.Fatalf("matrix = %+v", m)
	}
	if r := out.Results[1]; r.Title != "The Matrix Reloaded" || r.Status != "not_requested" || r.Note != "" {
		t.Fatalf("reloaded = %+v", r)
	}

	mustCall(t, tl, ToolSearchMedia, `{"query":"Inception","page":1}`, &out)
	if len(out.Results) != 1 || out.Results[0].Status != "available" || !strings.Contains(out.Results[0].Note, "already available") {
		t.Fatalf("inception = %+v", out)
	}
	if len(out.Results[0].Overview) > overviewChars+len("…") || !strings.HasSuffix(out.Results[0].Overview, "…") {
		t.Fatalf("overview not truncated: %q", out.Results[0].Overview)
	}

	mustCall(t, tl, ToolSearchMedia, `{"query":"dicaprio"}`, &out)
	if len(out.Results) != 1 || out.Results[0].MediaType != "person" || !slices.Equal(out.Results[0].KnownFor, []string{"Inception (2010), movie 27205"}) {
		t.Fatalf("person = %+v", out)
	}

	mustCall(t, tl, ToolSearchMedia, `{"query":"Ocean's Eleven: +1 & more!"}`, &out)
	if len(out.Results) != 0 || !strings.Contains(out.Message, "No results") {
		t.Fatalf("no results = %+v", out)
	}
}
