package seerrtools

import (
	"strings"
	"testing"
)

// TestToolBadArguments checks that arguments outside a tool's schema, or
// that the schema cannot tell apart (a blank query, seasons of a movie),
// are refused with a text naming the tool and the argument, before any
// call to Seerr.
func TestToolBadArguments(t *testing.T) {
	f, c := newFake(t)
	tl := tools(t, c)
	tests := []struct {
		tool, args, want string
	}{
		{ToolSearchMedia, `{}`, `invalid arguments: required: missing properties: ["query"]`},
		{ToolSearchMedia, `{"query":"   "}`, "query is required"},
		{ToolSearchMedia, `{"query":42}`, "invalid arguments"},
		{ToolSearchMedia, `{"query":"dune","page":0}`, "invalid arguments: page: minimum"},
		{ToolSearchMedia, `{"query":"dune","limit":5}`, `unexpected additional properties ["limit"]`},
		{ToolSearchMedia, `not json`, "invalid arguments"},
		{ToolSearchMedia, `{"query":"dune"} {"x":1}`, "after top-level value"},
		{ToolGetMediaDetails, `{"tmdb_id":603}`, `missing properties: ["media_type"]`},
		{ToolGetMediaDetails, `{"media_type":"film","tmdb_id":603}`, "media_type: enum: film does not equal any of: [movie tv]"},
		{ToolGetMediaDetails, `{"media_type":"movie"}`, `missing properties: ["tmdb_id"]`},
		{ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":"603"}`, "invalid arguments"},
		{ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":-3}`, "tmdb_id: minimum"},
		{ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":6.5}`, "invalid arguments"},
		{ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631,"seasons":[1]}`, "seasons apply to TV shows only"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[]}`, "seasons: fits none of its forms: minItems: array length 0 is less than 1"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":"some"}`, "enum: some does not equal any of: [all]"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[-1]}`, "minimum: -1/1 is less than 0"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":["1"]}`, `type: 1 has type "string", want "integer"`},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"is4k":true}`, `unexpected additional properties ["is4k"]`},
		{ToolListRequests, `{"filter":"everything"}`, "filter: enum: everything does not equal any of: [all approved available pending processing unavailable failed]"},
		{ToolListRequests, `{"take":0}`, "take: minimum"},
		{ToolListRequests, `{"take":100}`, "take: maximum"},
		{ToolListRequests, `{"skip":-1}`, "skip: minimum"},
		{ToolGetTrending, `{"page":501}`, "page: maximum"},
		{ToolGetTrending, `[]`, "invalid arguments: the arguments must be a JSON object"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":"ALL"}`, "enum: ALL does not equal any of: [all]"},
		{ToolListRequests, `{"filter":""}`, "filter: enum"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			_, err := call(t, tl, tt.tool, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.tool+": ") {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if n := len(f.Calls()); n != 0 {
		t.Fatalf("%d calls reached Seerr with bad arguments", n)
	}

	// A season the show does not have is refused after looking at the show.
	_, err := call(t, tl, ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[1,9]}`)
	if err == nil || !strings.Contains(err.Error(), "The Last of Us (2023) has no season 9 (seasons: 1, 2)") {
		t.Fatalf("season 9: %v", err)
	}
	if len(f.Created()) != 0 {
		t.Fatal("a request was placed")
	}
}
