package seerr

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/tools/seerr/seerrtest"
)

func tools(t *testing.T, c *Client) map[string]agent.Tool {
	t.Helper()
	out := map[string]agent.Tool{}
	for _, tool := range Skill(c).Tools {
		out[tool.Name] = tool
	}
	return out
}

// call runs a tool and checks that the key appears nowhere in its answer.
func call(t *testing.T, tl map[string]agent.Tool, name, args string) (string, error) {
	t.Helper()
	tool, ok := tl[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	out, err := tool.Execute(context.Background(), json.RawMessage(args))
	if strings.Contains(out, testKey) || (err != nil && strings.Contains(err.Error(), testKey)) {
		t.Fatalf("%s(%s) leaks the API key: %q, %v", name, args, out, err)
	}
	return out, err
}

// mustCall runs a tool that must succeed and decodes its JSON output.
func mustCall(t *testing.T, tl map[string]agent.Tool, name, args string, into any) string {
	t.Helper()
	out, err := call(t, tl, name, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	if err := json.Unmarshal([]byte(out), into); err != nil {
		t.Fatalf("%s output is not JSON: %v\n%s", name, err, out)
	}
	return out
}

func TestSkillDefinition(t *testing.T) {
	s := Skill(nil)
	if s.Name == "" || !strings.Contains(s.Prompt, "request_media") {
		t.Fatalf("skill = %+v", s)
	}
	want := []string{ToolSearchMedia, ToolGetMediaDetails, ToolRequestMedia, ToolListRequests, ToolGetTrending}
	var names []string
	for _, tool := range s.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.Run == nil {
			t.Errorf("%s: incomplete", tool.Name)
		}
		if tool.SideEffects != (tool.Name == ToolRequestMedia) {
			t.Errorf("%s: SideEffects = %v", tool.Name, tool.SideEffects)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
			t.Fatalf("%s: schema: %v", tool.Name, err)
		}
		if schema.Type != "object" || len(schema.Properties) == 0 || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema = %s", tool.Name, tool.Parameters)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name, r)
			}
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
}

func TestSkillNotConfigured(t *testing.T) {
	unconfigured, err := New(Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Client{nil, unconfigured} {
		for _, tool := range Skill(c).Tools {
			_, err := tool.Execute(context.Background(), json.RawMessage(`{"query":"dune","media_type":"movie","tmdb_id":1}`))
			if !errors.Is(err, ErrNotConfigured) || err.Error() != "Seerr is not configured" {
				t.Errorf("%s: err = %v", tool.Name, err)
			}
		}
	}
}

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
	f, c := newFake(t)
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
	rc, err := New(Config{BaseURL: proxy.URL, APIKey: c.key})
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

func TestToolBadArguments(t *testing.T) {
	f, c := newFake(t)
	tl := tools(t, c)
	tests := []struct {
		tool, args, want string
	}{
		{ToolSearchMedia, `{}`, "query is required"},
		{ToolSearchMedia, `{"query":"   "}`, "query is required"},
		{ToolSearchMedia, `{"query":42}`, "invalid arguments"},
		{ToolSearchMedia, `{"query":"dune","page":0}`, "page must be between 1 and 500"},
		{ToolSearchMedia, `{"query":"dune","limit":5}`, `unknown field "limit"`},
		{ToolSearchMedia, `not json`, "invalid arguments"},
		{ToolSearchMedia, `{"query":"dune"} {"x":1}`, "trailing data"},
		{ToolGetMediaDetails, `{"tmdb_id":603}`, `media_type must be "movie" or "tv"`},
		{ToolGetMediaDetails, `{"media_type":"film","tmdb_id":603}`, `got "film"`},
		{ToolGetMediaDetails, `{"media_type":"movie"}`, "tmdb_id is required"},
		{ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":"603"}`, "invalid arguments"},
		{ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":-3}`, "positive integer"},
		{ToolGetMediaDetails, `{"media_type":"movie","tmdb_id":6.5}`, "invalid arguments"},
		{ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631,"seasons":[1]}`, "seasons apply to TV shows only"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[]}`, "seasons is empty"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":"some"}`, `got "some"`},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":[-1]}`, "negative"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"seasons":["1"]}`, "array of season numbers"},
		{ToolRequestMedia, `{"media_type":"tv","tmdb_id":100088,"is4k":true}`, `unknown field "is4k"`},
		{ToolListRequests, `{"filter":"everything"}`, "filter must be one of all, approved"},
		{ToolListRequests, `{"take":0}`, "take must be between 1 and 20"},
		{ToolListRequests, `{"take":100}`, "take must be between 1 and 20"},
		{ToolListRequests, `{"skip":-1}`, "skip must not be negative"},
		{ToolGetTrending, `{"page":501}`, "page must be between 1 and 500"},
		{ToolGetTrending, `[]`, "invalid arguments"},
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

func TestToolAPIErrors(t *testing.T) {
	f, c := newFake(t)
	wrongKey, err := New(Config{BaseURL: f.URL, APIKey: testKey + "-revoked"})
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	unreachable, err := New(Config{BaseURL: closed.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct{ tool, args string }{
		{ToolSearchMedia, `{"query":"dune"}`},
		{ToolGetMediaDetails, `{"media_type":"tv","tmdb_id":1396}`},
		{ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631}`},
		{ToolListRequests, `{}`},
		{ToolGetTrending, `{}`},
	}
	tests := []struct {
		name   string
		c      *Client
		status int
		body   string
		want   string
	}{
		{"wrong key", wrongKey, 0, "", "check SEERR_API_KEY"},
		{"401", c, 401, `{"message":"Unauthorized: ` + testKey + `"}`, "HTTP 401, the API key was rejected"},
		{"500", c, 500, `{"message":"Unable to retrieve data, key=` + testKey + `"}`, "HTTP 500, Seerr server error: Unable to retrieve data, key=[redacted]"},
		{"unreachable", unreachable, 0, "", "cannot reach Seerr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Fail(tt.status, tt.body)
			defer f.Fail(0, "")
			tl := tools(t, tt.c)
			for _, cl := range calls {
				out, err := call(t, tl, cl.tool, cl.args)
				if err == nil || out != "" || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: out %q, err %v; want error containing %q", cl.tool, out, err, tt.want)
				}
			}
		})
	}
	if len(f.Created()) != 0 {
		t.Fatal("a request was placed")
	}
}

func FuzzParseSeasons(f *testing.F) {
	for _, s := range []string{``, `null`, `"all"`, `"ALL"`, `[1,2,2]`, `[]`, `[-1]`, `"x"`, `[1.5]`, `{}`, `[0,99999999999]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		all, seasons, err := parseSeasons(json.RawMessage(in))
		if err != nil {
			if all || seasons != nil {
				t.Fatalf("error with result: %v %v", all, seasons)
			}
			return
		}
		if all == (seasons != nil) {
			t.Fatalf("all=%v seasons=%v", all, seasons)
		}
		if !slices.IsSorted(seasons) || len(slices.Compact(slices.Clone(seasons))) != len(seasons) {
			t.Fatalf("seasons not sorted/unique: %v", seasons)
		}
		for _, n := range seasons {
			if n < 0 {
				t.Fatalf("negative season %d", n)
			}
		}
	})
}
