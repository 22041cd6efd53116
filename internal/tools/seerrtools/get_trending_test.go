package seerrtools

import (
	"testing"
)

func TestGetTrendingTool(t *testing.T) {
	_, c := newFake(t)
	var out searchOut
	mustCall(t, tools(t, c), ToolGetTrending, ``, &out)
	if len(out.Results) != 5 || out.Results[0].Title != "Oppenheimer" || out.Results[0].Status != "processing" ||
		out.Results[2].Title != "The Last of Us" || out.Results[2].Status != "not_requested" || out.Results[4].MediaType != "person" {
		t.Fatalf("out = %+v", out)
	}
	mustCall(t, tools(t, c), ToolGetTrending, `{"page":2}`, &out)
	if out.Page != 2 || len(out.Results) != 0 {
		t.Fatalf("page 2 = %+v", out)
	}
}
