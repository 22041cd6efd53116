package seerr

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"agentchat/internal/seerr/seerrtest"
)

const testKey = "sk-seerr-Zq81vX0secretKEY4242"

func newFake(t *testing.T) (*seerrtest.Server, *Client) {
	t.Helper()
	f := seerrtest.New(testKey)
	t.Cleanup(f.Close)
	c, err := New(Config{BaseURL: f.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestNew(t *testing.T) {
	tests := []struct {
		in         string
		configured bool
		wantErr    bool
		display    string
	}{
		{"", false, false, ""},
		{"   ", false, false, ""},
		{"http://seerr:5055", true, false, "http://seerr:5055"},
		{"http://seerr:5055/", true, false, "http://seerr:5055"},
		{"https://media.example.com/seerr/api/v1/", true, false, "https://media.example.com/seerr"},
		{"http://user:pw@seerr:5055?x=1#f", true, false, "http://seerr:5055"},
		{"ftp://seerr", false, true, ""},
		{"seerr:5055", false, true, ""},
		{"http://", false, true, ""},
		{"http://[::1", false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := New(Config{BaseURL: tt.in, APIKey: testKey})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), testKey) {
					t.Fatal("key in error")
				}
				return
			}
			if c.Configured() != tt.configured {
				t.Fatalf("Configured() = %v", c.Configured())
			}
			if tt.configured && c.display != tt.display {
				t.Fatalf("display = %q, want %q", c.display, tt.display)
			}
		})
	}
}

func TestNotConfigured(t *testing.T) {
	unconfigured, err := New(Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Client{"nil": nil, "empty url": unconfigured} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			_, e1 := c.Search(ctx, "dune", 1, "")
			_, e2 := c.Movie(ctx, 603)
			_, e3 := c.TV(ctx, 1396)
			_, e4 := c.Requests(ctx, RequestQuery{})
			_, e5 := c.Trending(ctx, 1, "")
			_, e6 := c.CreateRequest(ctx, NewRequest{MediaType: MediaMovie, MediaID: 603})
			for i, err := range []error{e1, e2, e3, e4, e5, e6} {
				if !errors.Is(err, ErrNotConfigured) || err.Error() != "Seerr is not configured" {
					t.Errorf("call %d: err = %v", i+1, err)
				}
			}
		})
	}
}

func TestEncodeQuery(t *testing.T) {
	tests := []string{
		"The Matrix",
		"Prince of Persia: The Sands of Time",
		"It's Always Sunny in Philadelphia",
		"Ach du Scheisse!",
		"1+1 = 2 & (more) [x] #1 @home; 50% off, *yes*/no?",
		"Amélie",
		"千と千尋の神隠し",
	}
	for _, in := range tests {
		enc := encodeQuery([]string{"query", in, "page", "1"})
		raw, _ := strings.CutPrefix(enc, "query=")
		raw, _, _ = strings.Cut(raw, "&")
		if strings.ContainsAny(raw, ":/?#[]@!$&'()*+,;= ") {
			t.Errorf("%q encoded as %q: reserved character left", in, raw)
		}
		got, err := url.PathUnescape(raw)
		if err != nil || got != in {
			t.Errorf("%q: round trip gave %q, %v", in, got, err)
		}
		if !strings.HasSuffix(enc, "&page=1") {
			t.Errorf("%q: encoded %q", in, enc)
		}
	}
}

func TestSearch(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	p, err := c.Search(ctx, "matrix", 1, "en")
	if err != nil {
		t.Fatal(err)
	}
	if p.Page != 1 || p.TotalResults != 2 || len(p.Results) != 2 {
		t.Fatalf("page = %+v", p)
	}
	m := p.Results[0]
	if m.ID != seerrtest.TheMatrix || m.MediaType != MediaMovie || m.DisplayTitle() != "The Matrix" || m.Date() != "1999-03-31" {
		t.Fatalf("first result = %+v", m)
	}
	if m.MediaInfo == nil || m.MediaInfo.Status != StatusPending || m.MediaInfo.TMDBID != seerrtest.TheMatrix {
		t.Fatalf("mediaInfo = %+v", m.MediaInfo)
	}
	if p.Results[1].MediaInfo != nil {
		t.Fatalf("The Matrix Reloaded has mediaInfo %+v", p.Results[1].MediaInfo)
	}
	calls := f.Calls()
	if len(calls) != 1 || calls[0].Path != "/api/v1/search" || calls[0].RawQuery != "query=matrix&page=1&language=en" {
		t.Fatalf("calls = %+v", calls)
	}

	// Titles with reserved characters must reach Seerr encoded.
	p, err = c.Search(ctx, "Prince of Persia: The Sands of Time!", 2, "")
	if err != nil {
		t.Fatalf("search with reserved characters: %v", err)
	}
	if p.Page != 2 || len(p.Results) != 0 {
		t.Fatalf("page = %+v", p)
	}

	tv, err := c.Search(ctx, "stranger", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tv.Results) != 1 || tv.Results[0].MediaType != MediaTV || tv.Results[0].DisplayTitle() != "Stranger Things" ||
		tv.Results[0].Date() != "2016-07-15" || tv.Results[0].MediaInfo.Status != StatusPartiallyAvailable {
		t.Fatalf("tv result = %+v", tv.Results)
	}
	person, err := c.Search(ctx, "dicaprio", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(person.Results) != 1 || person.Results[0].MediaType != MediaPerson || len(person.Results[0].KnownFor) != 1 ||
		person.Results[0].KnownFor[0].ID != seerrtest.Inception {
		t.Fatalf("person result = %+v", person.Results)
	}
	if _, err := c.Search(ctx, "  ", 1, ""); err == nil {
		t.Fatal("empty query accepted")
	}
}

func TestDetails(t *testing.T) {
	_, c := newFake(t)
	ctx := context.Background()
	m, err := c.Movie(ctx, seerrtest.TheMatrix)
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "The Matrix" || m.Runtime != 136 || m.IMDbID != "tt0133093" || len(m.Genres) != 2 || m.Genres[0].Name != "Action" {
		t.Fatalf("movie = %+v", m)
	}
	if m.MediaInfo == nil || m.MediaInfo.Status != StatusPending || len(m.MediaInfo.Requests) != 1 {
		t.Fatalf("mediaInfo = %+v", m.MediaInfo)
	}
	r := m.MediaInfo.Requests[0]
	if r.Status != RequestPending || r.RequestedBy.Name() != "alice" || r.CreatedAt == "" {
		t.Fatalf("request = %+v", r)
	}

	tv, err := c.TV(ctx, seerrtest.StrangerThings)
	if err != nil {
		t.Fatal(err)
	}
	if tv.Name != "Stranger Things" || tv.NumberOfSeasons != 5 || len(tv.Seasons) != 5 || tv.Seasons[3].SeasonNumber != 4 || tv.Seasons[3].EpisodeCount != 9 {
		t.Fatalf("tv = %+v", tv)
	}
	mi := tv.MediaInfo
	if mi == nil || mi.Status != StatusPartiallyAvailable || mi.TVDBID != 305288 || len(mi.Seasons) != 5 {
		t.Fatalf("tv mediaInfo = %+v", mi)
	}
	if mi.Seasons[0].Status != StatusAvailable || mi.Seasons[3].Status != StatusPending || mi.Seasons[4].Status != StatusUnknown {
		t.Fatalf("season statuses = %+v", mi.Seasons)
	}
	if len(mi.Requests) != 1 || len(mi.Requests[0].Seasons) != 1 || mi.Requests[0].Seasons[0].SeasonNumber != 4 {
		t.Fatalf("tv requests = %+v", mi.Requests)
	}

	unknown, err := c.TV(ctx, seerrtest.TheLastOfUs)
	if err != nil {
		t.Fatal(err)
	}
	if unknown.MediaInfo != nil || len(unknown.Seasons) != 2 {
		t.Fatalf("unknown show = %+v", unknown)
	}

	_, err = c.Movie(ctx, 999999999)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("missing movie: %v", err)
	}
	if _, err := c.TV(ctx, 0); err == nil {
		t.Fatal("tmdb id 0 accepted")
	}
}

func TestCreateRequest(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()

	r, err := c.CreateRequest(ctx, NewRequest{MediaType: MediaMovie, MediaID: seerrtest.Dune})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == 0 || r.Status != RequestApproved || r.Media == nil || r.Media.TMDBID != seerrtest.Dune || r.RequestedBy.Name() != "Admin" {
		t.Fatalf("request = %+v", r)
	}
	calls := f.Calls()
	if body := calls[len(calls)-1].Body; body != `{"mediaId":438631,"mediaType":"movie"}` {
		t.Fatalf("body = %s", body)
	}

	f.SetAutoApprove(false)
	r, err = c.CreateRequest(ctx, NewRequest{MediaType: MediaTV, MediaID: seerrtest.TheLastOfUs, AllSeasons: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != RequestPending || len(r.Seasons) != 2 {
		t.Fatalf("tv request = %+v", r)
	}
	calls = f.Calls()
	if body := calls[len(calls)-1].Body; body != `{"mediaId":100088,"mediaType":"tv","seasons":"all"}` {
		t.Fatalf("body = %s", body)
	}

	r, err = c.CreateRequest(ctx, NewRequest{MediaType: MediaTV, MediaID: seerrtest.StrangerThings, Seasons: []int{5}, Is4K: false})
	if err != nil || len(r.Seasons) != 1 || r.Seasons[0].SeasonNumber != 5 {
		t.Fatalf("season 5: %+v, %v", r, err)
	}

	// Seerr's duplicate answers.
	_, err = c.CreateRequest(ctx, NewRequest{MediaType: MediaMovie, MediaID: seerrtest.TheMatrix})
	var apiErr *APIError
	if !errors.Is(err, ErrAlreadyRequested) || !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict ||
		apiErr.Message != "Request for this media already exists." {
		t.Fatalf("duplicate movie: %v", err)
	}
	_, err = c.CreateRequest(ctx, NewRequest{MediaType: MediaTV, MediaID: seerrtest.StrangerThings, Seasons: []int{1, 4}})
	if !errors.Is(err, ErrAlreadyRequested) || !strings.Contains(err.Error(), "No seasons available to request") {
		t.Fatalf("duplicate seasons: %v", err)
	}

	bad := []NewRequest{
		{MediaType: "music", MediaID: 1},
		{MediaType: MediaMovie, MediaID: 0},
		{MediaType: MediaMovie, MediaID: 1, Seasons: []int{1}},
		{MediaType: MediaTV, MediaID: 1},
		{MediaType: MediaTV, MediaID: 1, Seasons: []int{-1}},
	}
	before := len(f.Calls())
	for _, nr := range bad {
		if _, err := c.CreateRequest(ctx, nr); err == nil {
			t.Errorf("%+v accepted", nr)
		}
	}
	if len(f.Calls()) != before {
		t.Fatal("invalid requests reached Seerr")
	}
	if got := f.Created(); len(got) != 3 {
		t.Fatalf("created = %+v", got)
	}
}

func TestRequests(t *testing.T) {
	_, c := newFake(t)
	ctx := context.Background()
	p, err := c.Requests(ctx, RequestQuery{Take: 2, Filter: "all", Sort: "added"})
	if err != nil {
		t.Fatal(err)
	}
	if p.PageInfo.Results != 5 || p.PageInfo.Pages != 3 || p.PageInfo.Page != 1 || len(p.Results) != 2 {
		t.Fatalf("page = %+v", p.PageInfo)
	}
	first := p.Results[0]
	if first.Status != RequestPending || first.Media.TMDBID != seerrtest.TheMatrix || first.Type != MediaMovie ||
		first.RequestedBy.Name() != "alice" || first.CreatedAt != "2024-11-02T19:22:10.000Z" {
		t.Fatalf("first request = %+v", first)
	}
	p, err = c.Requests(ctx, RequestQuery{Filter: "available"})
	if err != nil || len(p.Results) != 1 || p.Results[0].Media.TMDBID != seerrtest.Inception || p.Results[0].Media.Status != StatusAvailable {
		t.Fatalf("available: %+v, %v", p, err)
	}
	for _, q := range []RequestQuery{{Filter: "everything"}, {Sort: "newest"}, {Take: -1}} {
		if _, err := c.Requests(ctx, q); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
}

func TestTrending(t *testing.T) {
	_, c := newFake(t)
	p, err := c.Trending(context.Background(), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Results) != 5 || p.Results[0].ID != seerrtest.Oppenheimer || p.Results[0].MediaInfo.Status != StatusProcessing ||
		p.Results[1].MediaType != MediaTV || p.Results[4].MediaType != MediaPerson {
		t.Fatalf("trending = %+v", p.Results)
	}
}

func TestAPIErrors(t *testing.T) {
	f, c := newFake(t)
	wrongKey, err := New(Config{BaseURL: f.URL, APIKey: "sk-wrong-" + testKey})
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	unreachable, err := New(Config{BaseURL: closedURL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		c      *Client
		status int
		body   string
		is     error
		want   []string
	}{
		{"wrong key", wrongKey, 0, "", ErrUnauthorized, []string{"HTTP 403", "SEERR_API_KEY", "You do not have permission"}},
		{"401 echoing the key", c, 401, `{"message":"Invalid API key ` + testKey + `"}`, ErrUnauthorized, []string{"HTTP 401", "SEERR_API_KEY", "[redacted]"}},
		{"500", c, 500, `{"message":"SQLITE_BUSY: database is locked","errors":[]}`, nil, []string{"HTTP 500", "server error", "database is locked"}},
		{"502 html", c, 502, "<html><body><h1>502 Bad Gateway</h1></body></html>", nil, []string{"HTTP 502"}},
		{"plain text", c, 503, "upstream timeout for key " + testKey, nil, []string{"HTTP 503", "upstream timeout", "[redacted]"}},
		{"bad json", c, 200, `{"page":`, nil, []string{"decode response"}},
		{"unreachable", unreachable, 0, "", nil, []string{"cannot reach Seerr at " + closedURL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Fail(tt.status, tt.body)
			defer f.Fail(0, "")
			_, err := tt.c.Search(context.Background(), "dune", 1, "")
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "<html") {
				t.Errorf("err leaks: %q", err)
			}
		})
	}
}

func TestNoRedirectWithKey(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "" {
			leaked.Store(true)
		}
		_, _ = w.Write([]byte(`{"page":1,"totalPages":0,"totalResults":0,"results":[]}`))
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer redirector.Close()
	c, err := New(Config{BaseURL: redirector.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Search(context.Background(), "dune", 1, "")
	if err == nil || !strings.Contains(err.Error(), "HTTP 302") || !strings.Contains(err.Error(), "SEERR_URL") {
		t.Fatalf("err = %v", err)
	}
	if leaked.Load() {
		t.Fatal("the API key was sent to the redirect target")
	}
}

func TestContextCanceled(t *testing.T) {
	_, c := newFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Movie(ctx, seerrtest.Dune)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
