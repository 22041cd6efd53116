// Package seerrtest is an in-process fake of the Overseerr/Jellyseerr
// ("Seerr") v1 API for tests. It serves a small catalogue of real TMDB
// titles with Seerr's wire format, checks the X-Api-Key header like Seerr
// (403 with {"error"}), enforces Seerr's query-encoding rule, creates
// requests with Seerr's duplicate rules (409, 202 "No seasons available to
// request") and records every call.
package seerrtest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TMDB ids of the catalogue, with their state in the fake.
const (
	// Inception (2010): movie, available, approved request by alice.
	Inception = 27205
	// Interstellar (2014): movie, an earlier request by carol was declined;
	// it can be requested again.
	Interstellar = 157336
	// TheMatrix (1999): movie, requested by alice, waiting for approval.
	TheMatrix = 603
	// Oppenheimer (2023): movie, requested by bob, approved, processing.
	Oppenheimer = 872585
	// Dune (2021): movie, unknown to Seerr.
	Dune = 438631
	// BreakingBad (2008): TV, 5 seasons and specials, available.
	BreakingBad = 1396
	// StrangerThings (2016): TV, seasons 1-3 available, season 4 requested
	// by bob (pending), season 5 free.
	StrangerThings = 66732
	// TheLastOfUs (2023): TV, 2 seasons, unknown to Seerr.
	TheLastOfUs = 100088
	// LeonardoDiCaprio: a person.
	LeonardoDiCaprio = 6193
)

// Media and request statuses of the Seerr API.
const (
	mediaUnknown    = 1
	mediaPending    = 2
	mediaProcessing = 3
	mediaPartial    = 4
	mediaAvailable  = 5

	reqPending  = 1
	reqApproved = 2
	reqDeclined = 3
	reqFailed   = 4
)

// Call is one API call received with a valid key.
type Call struct {
	Method   string
	Path     string
	RawQuery string
	Body     string
}

// Created is a request created through POST /api/v1/request.
type Created struct {
	ID        int
	MediaType string
	TMDBID    int
	Seasons   []int
	Status    int
}

type user struct {
	id    int
	name  string
	email string
}

type season struct {
	number   int
	episodes int
	name     string
	airDate  string
}

type media struct {
	id       int
	tvdbID   int
	status   int
	seasons  map[int]int // season number → status
	created  string
	modified string
}

type title struct {
	kind       string // movie or tv
	id         int
	name       string
	original   string
	date       string
	overview   string
	genres     []string
	runtime    int
	imdbID     string
	showStatus string
	seasons    []season
	popularity float64
	vote       float64
	media      *media
}

type request struct {
	id       int
	status   int
	t        *title
	seasons  []int
	by       user
	modBy    *user
	created  string
	modified string
}

type person struct {
	id       int
	name     string
	knownFor []int
}

// Server is a running fake Seerr. Its zero value is not usable; call New.
type Server struct {
	// URL is the base URL to use as SEERR_URL.
	URL string
	// APIKey is the key the fake accepts.
	APIKey string

	srv *httptest.Server

	mu          sync.Mutex
	titles      map[string]*title // "movie/603"
	people      []person
	trending    []string
	requests    []*request
	nextRequest int
	nextMedia   int
	autoApprove bool
	failStatus  int
	failBody    string
	calls       []Call
	created     []Created
	admin       user
}

// New starts a fake Seerr accepting apiKey. Requests made with the key are
// made by the admin user and approved automatically, as with a real Seerr
// API key; see SetAutoApprove.
func New(apiKey string) *Server {
	s := &Server{APIKey: apiKey, autoApprove: true, titles: map[string]*title{}}
	s.seed()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/search", s.search)
	mux.HandleFunc("GET /api/v1/discover/trending", s.trendingHandler)
	mux.HandleFunc("GET /api/v1/movie/{id}", s.details("movie"))
	mux.HandleFunc("GET /api/v1/tv/{id}", s.details("tv"))
	mux.HandleFunc("GET /api/v1/request", s.listRequests)
	mux.HandleFunc("POST /api/v1/request", s.createRequest)
	s.srv = httptest.NewServer(s.middleware(mux))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetAutoApprove chooses whether new requests are approved at once (admin
// key) or wait for approval.
func (s *Server) SetAutoApprove(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoApprove = on
}

// Fail makes every following call with a valid key answer status with body
// (a JSON document or plain text); status 0 restores normal service.
func (s *Server) Fail(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failStatus, s.failBody = status, body
}

// Calls returns the calls received with a valid key, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Count returns how many calls had that method and path.
func (s *Server) Count(method, path string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Method == method && c.Path == path {
			n++
		}
	}
	return n
}

// Created returns the requests created through the API, in order.
func (s *Server) Created() []Created {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.created)
}

func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != s.APIKey || s.APIKey == "" {
			writeJSON(w, http.StatusForbidden, map[string]any{"status": 403, "error": "You do not have permission to access this endpoint"})
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.mu.Lock()
		s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Body: string(body)})
		status, fb := s.failStatus, s.failBody
		s.mu.Unlock()
		if status != 0 {
			if json.Valid([]byte(fb)) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
			} else {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, fb)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, path, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{
		"message": msg,
		"errors":  []any{map[string]any{"path": path, "message": msg}},
	})
}

// rawParam returns the raw (still encoded) value of a query parameter.
func rawParam(rawQuery, name string) (string, bool) {
	for _, part := range strings.Split(rawQuery, "&") {
		k, v, _ := strings.Cut(part, "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

// intParam reads an optional numeric query parameter.
func intParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		badRequest(w, ".query."+name, fmt.Sprintf("request/query/%s must be number", name))
		return 0, false
	}
	return n, true
}

const reserved = ":/?#[]@!$&'()*+,;= "

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	raw, ok := rawParam(r.URL.RawQuery, "query")
	if !ok {
		badRequest(w, ".query.query", "request/query must have required property 'query'")
		return
	}
	if strings.ContainsAny(raw, reserved) {
		badRequest(w, ".query.query", "Parameter 'query' must be url encoded. Its value may not contain reserved characters.")
		return
	}
	q, err := url.PathUnescape(raw)
	if err != nil {
		badRequest(w, ".query.query", "Parameter 'query' must be url encoded. Its value may not contain reserved characters.")
		return
	}
	page, ok := intParam(w, r, "page", 1)
	if !ok {
		return
	}
	needle := strings.ToLower(strings.TrimSpace(q))
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []any
	for _, k := range s.sortedKeys() {
		t := s.titles[k]
		if needle != "" && (strings.Contains(strings.ToLower(t.name), needle) || strings.Contains(strings.ToLower(t.original), needle)) {
			hits = append(hits, s.resultJSON(t))
		}
	}
	for _, p := range s.people {
		if needle != "" && strings.Contains(strings.ToLower(p.name), needle) {
			hits = append(hits, s.personJSON(p))
		}
	}
	writeJSON(w, http.StatusOK, paginate(hits, page))
}

func paginate(items []any, page int) map[string]any {
	const per = 20
	if page < 1 {
		page = 1
	}
	pages := (len(items) + per - 1) / per
	lo := min((page-1)*per, len(items))
	hi := min(lo+per, len(items))
	results := items[lo:hi]
	if results == nil {
		results = []any{}
	}
	return map[string]any{"page": page, "totalPages": pages, "totalResults": len(items), "results": results}
}

func (s *Server) trendingHandler(w http.ResponseWriter, r *http.Request) {
	page, ok := intParam(w, r, "page", 1)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []any
	for _, k := range s.trending {
		items = append(items, s.resultJSON(s.titles[k]))
	}
	items = append(items, s.personJSON(s.people[0]))
	writeJSON(w, http.StatusOK, paginate(items, page))
}

func (s *Server) details(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			name := "movieId"
			if kind == "tv" {
				name = "tvId"
			}
			badRequest(w, ".params."+name, "request/params/"+name+" must be number")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		t := s.titles[kind+"/"+strconv.Itoa(id)]
		if t == nil {
			msg := "Movie not found."
			if kind == "tv" {
				msg = "TV show not found."
			}
			writeJSON(w, http.StatusNotFound, map[string]any{"message": msg})
			return
		}
		writeJSON(w, http.StatusOK, s.detailsJSON(t))
	}
}

func (s *Server) createRequest(w http.ResponseWriter, r *http.Request) {
	var body struct {
		MediaType *string         `json:"mediaType"`
		MediaID   *float64        `json:"mediaId"`
		Seasons   json.RawMessage `json:"seasons"`
		Is4K      bool            `json:"is4k"`
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		badRequest(w, ".body.mediaType", "request/body must have required property 'mediaType'")
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		badRequest(w, ".body", "request/body must be object")
		return
	}
	if body.MediaType == nil || (*body.MediaType != "movie" && *body.MediaType != "tv") {
		badRequest(w, ".body.mediaType", "request/body/mediaType must be equal to one of the allowed values: movie, tv")
		return
	}
	if body.MediaID == nil || *body.MediaID != float64(int(*body.MediaID)) {
		badRequest(w, ".body.mediaId", "request/body must have required property 'mediaId'")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kind, id := *body.MediaType, int(*body.MediaID)
	t := s.titles[kind+"/"+strconv.Itoa(id)]
	if t == nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "[TMDB] Failed to fetch " + kind + " details: Request failed with status code 404"})
		return
	}
	var seasons []int
	if kind == "tv" {
		var all string
		switch {
		case json.Unmarshal(body.Seasons, &all) == nil && all == "all":
			for _, sn := range t.seasons {
				if sn.number > 0 {
					seasons = append(seasons, sn.number)
				}
			}
		case json.Unmarshal(body.Seasons, &seasons) == nil && seasons != nil:
		default:
			badRequest(w, ".body.seasons", "request/body/seasons must be array or equal to one of the allowed values: all")
			return
		}
		taken := map[int]bool{}
		for _, rq := range s.requests {
			if rq.t == t && rq.status != reqDeclined {
				for _, n := range rq.seasons {
					taken[n] = true
				}
			}
		}
		if t.media != nil {
			for n, st := range t.media.seasons {
				if st != mediaUnknown {
					taken[n] = true
				}
			}
		}
		var final []int
		for _, n := range seasons {
			if !taken[n] && !slices.Contains(final, n) {
				final = append(final, n)
			}
		}
		if len(final) == 0 {
			writeJSON(w, http.StatusAccepted, map[string]any{"message": "No seasons available to request"})
			return
		}
		seasons = final
	} else {
		for _, rq := range s.requests {
			if rq.t == t && rq.status != reqDeclined {
				writeJSON(w, http.StatusConflict, map[string]any{"message": "Request for this media already exists."})
				return
			}
		}
		if t.media != nil && (t.media.status == mediaAvailable || t.media.status == mediaPartial) {
			writeJSON(w, http.StatusConflict, map[string]any{"message": "Request for this media already exists."})
			return
		}
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	status, mstatus := reqPending, mediaPending
	var modBy *user
	if s.autoApprove {
		status, mstatus, modBy = reqApproved, mediaProcessing, &s.admin
	}
	if t.media == nil {
		s.nextMedia++
		t.media = &media{id: s.nextMedia, status: mediaUnknown, seasons: map[int]int{}, created: now}
	}
	t.media.modified = now
	if t.media.status == mediaUnknown || t.media.status < mstatus && t.media.status != mediaPartial {
		t.media.status = mstatus
	}
	for _, n := range seasons {
		t.media.seasons[n] = mstatus
	}
	s.nextRequest++
	rq := &request{id: s.nextRequest, status: status, t: t, seasons: seasons, by: s.admin, modBy: modBy, created: now, modified: now}
	s.requests = append(s.requests, rq)
	s.created = append(s.created, Created{ID: rq.id, MediaType: kind, TMDBID: id, Seasons: slices.Clone(seasons), Status: status})
	writeJSON(w, http.StatusCreated, s.requestJSON(rq, true))
}

func (s *Server) listRequests(w http.ResponseWriter, r *http.Request) {
	take, ok := intParam(w, r, "take", 10)
	if !ok {
		return
	}
	skip, ok := intParam(w, r, "skip", 0)
	if !ok {
		return
	}
	filter := r.URL.Query().Get("filter")
	reqStatuses := []int{reqPending, reqApproved, reqDeclined, reqFailed}
	mediaStatuses := []int{mediaUnknown, mediaPending, mediaProcessing, mediaPartial, mediaAvailable}
	switch filter {
	case "", "all":
	case "approved":
		reqStatuses = []int{reqApproved}
	case "processing":
		reqStatuses, mediaStatuses = []int{reqApproved}, []int{mediaUnknown, mediaPending, mediaProcessing, mediaPartial}
	case "available":
		reqStatuses, mediaStatuses = []int{reqApproved}, []int{mediaAvailable}
	case "pending":
		reqStatuses = []int{reqPending}
	case "unavailable":
		reqStatuses, mediaStatuses = []int{reqPending, reqApproved}, []int{mediaUnknown, mediaPending, mediaProcessing, mediaPartial}
	case "failed":
		reqStatuses = []int{reqFailed}
	default:
		badRequest(w, ".query.filter", "request/query/filter must be equal to one of the allowed values: all, approved, available, pending, processing, unavailable, failed, deleted, completed")
		return
	}
	sortBy := r.URL.Query().Get("sort")
	if sortBy != "" && sortBy != "added" && sortBy != "modified" {
		badRequest(w, ".query.sort", "request/query/sort must be equal to one of the allowed values: added, modified")
		return
	}
	if take < 1 {
		take = 10
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*request
	for _, rq := range s.requests {
		if slices.Contains(reqStatuses, rq.status) && slices.Contains(mediaStatuses, rq.t.media.status) {
			match = append(match, rq)
		}
	}
	sort.SliceStable(match, func(i, j int) bool {
		if sortBy == "modified" {
			return match[i].modified > match[j].modified
		}
		return match[i].id > match[j].id
	})
	lo := min(max(skip, 0), len(match))
	hi := min(lo+take, len(match))
	results := []any{}
	for _, rq := range match[lo:hi] {
		results = append(results, s.requestJSON(rq, true))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"pageInfo": map[string]any{
			"pages": (len(match) + take - 1) / take, "pageSize": take, "results": len(match), "page": skip/take + 1,
		},
		"results": results,
	})
}

func (s *Server) sortedKeys() []string {
	keys := make([]string, 0, len(s.titles))
	for k := range s.titles {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return s.titles[keys[i]].popularity > s.titles[keys[j]].popularity })
	return keys
}
