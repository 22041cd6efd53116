package seerrtools

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/seerr"
)

type requestOutput struct {
	Result           string `json:"result"`
	Title            string `json:"title"`
	RequestID        int    `json:"request_id"`
	RequestStatus    string `json:"request_status"`
	RequestedBy      string `json:"requested_by"`
	SeasonsRequested []int  `json:"seasons_requested"`
	AvailableSeasons []int  `json:"already_available_seasons"`
	RequestedSeasons []int  `json:"already_requested_seasons"`
	AllSeasons       bool   `json:"all_seasons"`
	Message          string `json:"message"`
}

func TestRequestMediaTool(t *testing.T) {
	tests := []struct {
		name        string
		args        string
		autoApprove bool
		result      string
		status      string
		requested   []int
		available   []int
		already     []int
		message     string
		posted      string // body of the POST, "" when none is expected
	}{
		{name: "movie", args: `{"media_type":"movie","tmdb_id":438631}`, autoApprove: true, result: "requested", status: "approved",
			message: "Requested Dune (2021); the request was approved automatically", posted: `{"mediaId":438631,"mediaType":"movie"}`},
		{name: "movie waiting for approval", args: `{"media_type":"movie","tmdb_id":438631}`, result: "requested", status: "pending_approval",
			message: "the request is pending approval", posted: `{"mediaId":438631,"mediaType":"movie"}`},
		{name: "movie declined before", args: `{"media_type":"movie","tmdb_id":157336,"seasons":null}`, autoApprove: true, result: "requested",
			status: "approved", posted: `{"mediaId":157336,"mediaType":"movie"}`},
		{name: "movie already available", args: `{"media_type":"movie","tmdb_id":27205}`, result: "already_available",
			message: "Inception (2010) is already available in the library; nothing was requested."},
		{name: "movie already requested", args: `{"media_type":"movie","tmdb_id":603}`, result: "already_requested", status: "pending_approval",
			message: "The Matrix (1999) was already requested; it is waiting for approval (requested by alice). Nothing new was requested."},
		{name: "movie being processed", args: `{"media_type":"movie","tmdb_id":872585}`, result: "already_requested", status: "approved",
			message: "approved and being downloaded (requested by bob)"},
		{name: "tv all seasons by default", args: `{"media_type":"tv","tmdb_id":100088}`, result: "requested", status: "pending_approval",
			requested: []int{1, 2}, message: "Requested The Last of Us (2023), seasons 1, 2;", posted: `{"mediaId":100088,"mediaType":"tv","seasons":"all"}`},
		{name: "tv one season", args: `{"media_type":"tv","tmdb_id":100088,"seasons":[2]}`, autoApprove: true, result: "requested", status: "approved",
			requested: []int{2}, message: "season 2;", posted: `{"mediaId":100088,"mediaType":"tv","seasons":[2]}`},
		{name: "tv all skips available and requested seasons", args: `{"media_type":"tv","tmdb_id":66732,"seasons":"all"}`, result: "requested",
			status: "pending_approval", requested: []int{5}, available: []int{1, 2, 3}, already: []int{4},
			message: "Already available, not requested: seasons 1, 2, 3. Already requested before: season 4.", posted: `{"mediaId":66732,"mediaType":"tv","seasons":[5]}`},
		{name: "tv seasons already requested", args: `{"media_type":"tv","tmdb_id":66732,"seasons":[4,4]}`, result: "already_requested",
			already: []int{4}, message: "Stranger Things (2016): season 4 already requested; nothing new was requested."},
		{name: "tv seasons available and requested", args: `{"media_type":"tv","tmdb_id":66732,"seasons":[3,1,4]}`, result: "already_requested",
			available: []int{1, 3}, already: []int{4}, message: "seasons 1, 3 already available, season 4 already requested"},
		{name: "tv already available", args: `{"media_type":"tv","tmdb_id":1396,"seasons":"all"}`, result: "already_available",
			available: []int{1, 2, 3, 4, 5}, message: "Breaking Bad (2008): every season already available in the library; nothing was requested."},
		{name: "tv specials can be asked", args: `{"media_type":"tv","tmdb_id":1396,"seasons":[0]}`, autoApprove: true, result: "requested",
			status: "approved", requested: []int{0}, posted: `{"mediaId":1396,"mediaType":"tv","seasons":[0]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newFake(t)
			f.SetAutoApprove(tt.autoApprove)
			var out requestOutput
			raw := mustCall(t, tools(t, c), ToolRequestMedia, tt.args, &out)
			if out.Result != tt.result || out.RequestStatus != tt.status || !strings.Contains(out.Message, tt.message) ||
				!slices.Equal(out.SeasonsRequested, tt.requested) || !slices.Equal(out.AvailableSeasons, tt.available) ||
				!slices.Equal(out.RequestedSeasons, tt.already) {
				t.Fatalf("output = %s", raw)
			}
			var posts []string
			for _, c := range f.Calls() {
				if c.Method == http.MethodPost {
					posts = append(posts, c.Body)
				}
			}
			switch {
			case tt.posted == "" && len(posts) != 0:
				t.Fatalf("unexpected request placed: %v", posts)
			case tt.posted != "" && (len(posts) != 1 || posts[0] != tt.posted):
				t.Fatalf("posted %v, want %s", posts, tt.posted)
			}
			if tt.result == "requested" && (out.RequestID == 0 || len(f.Created()) != 1 || f.Created()[0].ID != out.RequestID) {
				t.Fatalf("request id %d, created %+v", out.RequestID, f.Created())
			}
		})
	}
}

func TestRequestMediaTwice(t *testing.T) {
	f, c := newFake(t)
	tl := tools(t, c)
	var out requestOutput
	mustCall(t, tl, ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631}`, &out)
	if out.Result != "requested" {
		t.Fatalf("first = %+v", out)
	}
	mustCall(t, tl, ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631}`, &out)
	if out.Result != "already_requested" || out.RequestedBy != "Admin" {
		t.Fatalf("second = %+v", out)
	}
	mustCall(t, tl, ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[1]}`, &out)
	mustCall(t, tl, ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088}`, &out)
	if out.Result != "requested" || !slices.Equal(out.SeasonsRequested, []int{2}) || !slices.Equal(out.RequestedSeasons, []int{1}) || out.AllSeasons {
		t.Fatalf("remaining seasons = %+v", out)
	}
	mustCall(t, tl, ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":"all"}`, &out)
	if out.Result != "already_requested" {
		t.Fatalf("all again = %+v", out)
	}
	if n := f.Count(http.MethodPost, "/api/v1/request"); n != 3 {
		t.Fatalf("%d requests placed, want 3", n)
	}
}

// A request Seerr refuses as duplicate after the details said otherwise
// (another user raced us) is reported as already requested.
func TestRequestMediaRace(t *testing.T) {
	f, _ := newFake(t)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"message":"Request for this media already exists."}`))
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, f.URL+r.URL.RequestURI(), nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}))
	defer proxy.Close()
	rc, err := seerr.New(seerr.Config{BaseURL: proxy.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	var out requestOutput
	mustCall(t, tools(t, rc), ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631}`, &out)
	if out.Result != "already_requested" || !strings.Contains(out.Message, "Nothing new was requested") {
		t.Fatalf("out = %+v", out)
	}
	mustCall(t, tools(t, rc), ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[1]}`, &out)
	if out.Result != "already_requested" || !slices.Equal(out.RequestedSeasons, []int{1}) {
		t.Fatalf("tv out = %+v", out)
	}
}
