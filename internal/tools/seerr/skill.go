package seerr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"agentchat/internal/agent"
)

// Tool names of the Seerr skill.
const (
	ToolSearchMedia     = "search_media"
	ToolGetMediaDetails = "get_media_details"
	ToolRequestMedia    = "request_media"
	ToolListRequests    = "list_requests"
	ToolGetTrending     = "get_trending"
)

// Limits of the tool arguments.
const (
	maxPage         = 500 // TMDB serves at most 500 pages
	defaultTake     = 10
	maxTake         = 20
	overviewChars   = 200
	titleFetchers   = 4
	knownForEntries = 3
)

const skillPrompt = `Media requests through Seerr (Overseerr/Jellyseerr), which adds titles to the media library.
- Find titles with search_media (get_trending for ideas). Each movie or show comes with its TMDB id and its status: not_requested, pending, processing, partially_available or available.
- get_media_details gives one title in detail; for a show it lists the seasons and the status of each.
- Call request_media only when the user asked for that title. If several titles or years match, ask which one first. For a show, request the seasons the user named, or all seasons when none were named.
- Never request a title the tools report as already available or already requested: say so instead. request_media checks this too and tells you.
- list_requests shows existing requests and their approval status.
Refer to titles by name and year; mention TMDB ids only when useful.`

// Skill returns the Seerr skill of the media agent: search_media,
// get_media_details, request_media, list_requests and get_trending. With a
// nil or unconfigured client the tools exist but return ErrNotConfigured.
func Skill(c *Client) agent.Skill {
	s := &skill{c: c}
	return agent.Skill{
		Name:   "seerr",
		Prompt: skillPrompt,
		Tools: []agent.Tool{
			{
				Name:        ToolSearchMedia,
				Description: "Search movies, TV shows and people in Seerr by title or name. Returns TMDB ids, years and whether each title is already available or requested.",
				Parameters:  json.RawMessage(schemaSearch),
				Run:         s.guard(ToolSearchMedia, s.search),
			},
			{
				Name:        ToolGetMediaDetails,
				Description: "Details of one movie or TV show by TMDB id: overview, runtime or seasons with episode counts, availability and existing requests.",
				Parameters:  json.RawMessage(schemaDetails),
				Run:         s.guard(ToolGetMediaDetails, s.details),
			},
			{
				Name:        ToolRequestMedia,
				Description: "Request a movie or TV show (some or all seasons) so it is added to the library. Does nothing, and says so, when the title is already available or already requested.",
				Parameters:  json.RawMessage(schemaRequest),
				SideEffects: true,
				Run:         s.guard(ToolRequestMedia, s.request),
			},
			{
				Name:        ToolListRequests,
				Description: "List media requests with their approval status, the title's availability, who asked and when.",
				Parameters:  json.RawMessage(schemaListRequests),
				Run:         s.guard(ToolListRequests, s.listRequests),
			},
			{
				Name:        ToolGetTrending,
				Description: "Trending movies and TV shows, with their availability in the library.",
				Parameters:  json.RawMessage(schemaTrending),
				Run:         s.guard(ToolGetTrending, s.trending),
			},
		},
	}
}

// JSON schemas of the tool arguments.
const (
	schemaSearch = `{"type":"object","properties":{` +
		`"query":{"type":"string","minLength":1,"description":"Title or person to search for, e.g. \"The Matrix\"."},` +
		`"page":{"type":"integer","minimum":1,"maximum":500,"description":"Result page (20 results per page). Default 1."}},` +
		`"required":["query"],"additionalProperties":false}`
	schemaDetails = `{"type":"object","properties":{` +
		`"media_type":{"type":"string","enum":["movie","tv"],"description":"movie or tv (a TV show)."},` +
		`"tmdb_id":{"type":"integer","minimum":1,"description":"TMDB id, from search_media."}},` +
		`"required":["media_type","tmdb_id"],"additionalProperties":false}`
	schemaRequest = `{"type":"object","properties":{` +
		`"media_type":{"type":"string","enum":["movie","tv"],"description":"movie or tv (a TV show)."},` +
		`"tmdb_id":{"type":"integer","minimum":1,"description":"TMDB id, from search_media."},` +
		`"seasons":{"description":"TV only: the season numbers to request, or \"all\" (the default for TV).",` +
		`"anyOf":[{"type":"array","items":{"type":"integer","minimum":0},"minItems":1},{"type":"string","enum":["all"]}]}},` +
		`"required":["media_type","tmdb_id"],"additionalProperties":false}`
	schemaListRequests = `{"type":"object","properties":{` +
		`"filter":{"type":"string","enum":["all","approved","available","pending","processing","unavailable","failed"],"description":"Which requests to list. Default all."},` +
		`"take":{"type":"integer","minimum":1,"maximum":20,"description":"How many requests to list. Default 10."},` +
		`"skip":{"type":"integer","minimum":0,"description":"How many of the newest requests to skip (paging). Default 0."}},` +
		`"additionalProperties":false}`
	schemaTrending = `{"type":"object","properties":{` +
		`"page":{"type":"integer","minimum":1,"maximum":500,"description":"Result page (20 results per page). Default 1."}},` +
		`"additionalProperties":false}`
)

type skill struct{ c *Client }

type runFunc func(ctx context.Context, args json.RawMessage) (string, error)

// guard refuses calls when Seerr is not configured.
func (s *skill) guard(name string, f runFunc) runFunc {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		if !s.c.Configured() {
			return "", ErrNotConfigured
		}
		out, err := f(ctx, args)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return out, nil
	}
}

// decodeArgs decodes the model's JSON arguments strictly.
func decodeArgs(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return errors.New("invalid arguments: trailing data after the JSON object")
	}
	return nil
}

func checkPage(p *int) (int, error) {
	if p == nil {
		return 1, nil
	}
	if *p < 1 || *p > maxPage {
		return 0, fmt.Errorf("invalid arguments: page must be between 1 and %d", maxPage)
	}
	return *p, nil
}

func checkMedia(mediaType string, id *int) error {
	if mediaType != MediaMovie && mediaType != MediaTV {
		return fmt.Errorf("invalid arguments: media_type must be \"movie\" or \"tv\", got %q", mediaType)
	}
	if id == nil {
		return errors.New("invalid arguments: tmdb_id is required")
	}
	if *id < 1 {
		return fmt.Errorf("invalid arguments: tmdb_id must be a positive integer, got %d", *id)
	}
	return nil
}

// compact encodes a tool output as one line of JSON, without HTML escaping.
func compact(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode output: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// item is a search or trending result as shown to the model.
type item struct {
	MediaType string   `json:"media_type"`
	TMDBID    int      `json:"tmdb_id"`
	Title     string   `json:"title"`
	Year      string   `json:"year,omitempty"`
	Status    string   `json:"status,omitempty"`
	Note      string   `json:"note,omitempty"`
	Overview  string   `json:"overview,omitempty"`
	KnownFor  []string `json:"known_for,omitempty"`
}

type pageOut struct {
	Query        string `json:"query,omitempty"`
	Page         int    `json:"page"`
	TotalPages   int    `json:"total_pages"`
	TotalResults int    `json:"total_results"`
	Results      []item `json:"results"`
	Message      string `json:"message,omitempty"`
}

func toItems(rs []Result) []item {
	out := make([]item, 0, len(rs))
	for _, r := range rs {
		it := item{MediaType: r.MediaType, TMDBID: r.ID, Title: r.DisplayTitle()}
		if r.MediaType == MediaPerson {
			for _, k := range r.KnownFor {
				if len(it.KnownFor) == knownForEntries {
					break
				}
				it.KnownFor = append(it.KnownFor, fmt.Sprintf("%s, %s %d", label(k.DisplayTitle(), paren(year(k.Date()))), k.MediaType, k.ID))
			}
		} else {
			it.Year = year(r.Date())
			it.Status, it.Note = availability(r.MediaInfo)
			it.Overview = truncate(r.Overview, overviewChars)
		}
		out = append(out, it)
	}
	return out
}

func label(title, yr string) string {
	if yr == "" {
		return title
	}
	return title + " " + yr
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	return strings.ToValidUTF8(s[:cut], "") + "…"
}

// activeRequest returns the newest standing request of a title, if any.
func activeRequest(mi *MediaInfo) *Request {
	if mi == nil {
		return nil
	}
	var best *Request
	for i := range mi.Requests {
		r := &mi.Requests[i]
		if r.Is4K || !r.Status.Active() {
			continue
		}
		if best == nil || r.ID > best.ID {
			best = r
		}
	}
	return best
}

// availability returns the status of a title and a plain note for the
// model when it is already available or already requested.
func availability(mi *MediaInfo) (status, note string) {
	if mi == nil {
		return StatusUnknown.String(), ""
	}
	switch mi.Status {
	case StatusAvailable:
		return mi.Status.String(), "already available in the library"
	case StatusPartiallyAvailable:
		return mi.Status.String(), "partly available in the library (some seasons or episodes)"
	case StatusProcessing:
		return mi.Status.String(), "already requested and approved; being downloaded"
	case StatusPending:
		return mi.Status.String(), "already requested; waiting for approval"
	case StatusBlacklisted:
		return mi.Status.String(), "marked blacklisted or deleted in Seerr"
	case StatusDeleted:
		return mi.Status.String(), "was removed from the library"
	}
	if r := activeRequest(mi); r != nil {
		if r.Status == RequestApproved {
			return StatusProcessing.String(), "already requested and approved"
		}
		return StatusPending.String(), "already requested; waiting for approval"
	}
	return mi.Status.String(), ""
}

// search_media

func (s *skill) search(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		Page  *int   `json:"page"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	a.Query = strings.TrimSpace(a.Query)
	if a.Query == "" {
		return "", errors.New("invalid arguments: query is required")
	}
	page, err := checkPage(a.Page)
	if err != nil {
		return "", err
	}
	res, err := s.c.Search(ctx, a.Query, page, "")
	if err != nil {
		return "", err
	}
	out := pageOut{Query: a.Query, Page: res.Page, TotalPages: res.TotalPages, TotalResults: res.TotalResults, Results: toItems(res.Results)}
	if len(out.Results) == 0 {
		out.Message = fmt.Sprintf("No results for %q.", a.Query)
	}
	return compact(out)
}

// get_trending

func (s *skill) trending(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Page *int `json:"page"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	page, err := checkPage(a.Page)
	if err != nil {
		return "", err
	}
	res, err := s.c.Trending(ctx, page, "")
	if err != nil {
		return "", err
	}
	out := pageOut{Page: res.Page, TotalPages: res.TotalPages, TotalResults: res.TotalResults, Results: toItems(res.Results)}
	if len(out.Results) == 0 {
		out.Message = "Nothing is trending on this page."
	}
	return compact(out)
}

// get_media_details

type requestOut struct {
	ID          int    `json:"id"`
	Status      string `json:"status"`
	Seasons     []int  `json:"seasons,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
	CreatedAt   string `json:"created_at,omitempty"`
	FourK       bool   `json:"is_4k,omitempty"`
}

type seasonOut struct {
	SeasonNumber int    `json:"season_number"`
	Name         string `json:"name,omitempty"`
	Episodes     int    `json:"episodes"`
	AirDate      string `json:"air_date,omitempty"`
	Status       string `json:"status"`
}

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

func requestsOf(mi *MediaInfo) []requestOut {
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

func seasonNumbers(ss []SeasonRequest) []int {
	var out []int
	for _, s := range ss {
		out = append(out, s.SeasonNumber)
	}
	return out
}

func genreNames(gs []Genre) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}

func (s *skill) details(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		MediaType string `json:"media_type"`
		TMDBID    *int   `json:"tmdb_id"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if err := checkMedia(a.MediaType, a.TMDBID); err != nil {
		return "", err
	}
	if a.MediaType == MediaMovie {
		m, err := s.c.Movie(ctx, *a.TMDBID)
		if err != nil {
			return "", err
		}
		st, note := availability(m.MediaInfo)
		return compact(detailsOut{
			MediaType: MediaMovie, TMDBID: m.ID, Title: m.Title, Year: year(m.ReleaseDate),
			ReleaseDate: m.ReleaseDate, RuntimeMinutes: m.Runtime, Genres: genreNames(m.Genres),
			Overview: m.Overview, Status: st, Note: note, Requests: requestsOf(m.MediaInfo),
		})
	}
	t, err := s.c.TV(ctx, *a.TMDBID)
	if err != nil {
		return "", err
	}
	st, note := availability(t.MediaInfo)
	states := seasonStates(t)
	out := detailsOut{
		MediaType: MediaTV, TMDBID: t.ID, Title: t.Name, Year: year(t.FirstAirDate),
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
	return compact(out)
}

// seasonState is what Seerr knows of one season.
type seasonState int

const (
	seasonFree seasonState = iota
	seasonRequested
	seasonApproved
	seasonProcessing
	seasonPartial
	seasonAvailable
)

func (s seasonState) String() string {
	switch s {
	case seasonRequested:
		return "pending"
	case seasonApproved:
		return "approved"
	case seasonProcessing:
		return "processing"
	case seasonPartial:
		return "partially_available"
	case seasonAvailable:
		return "available"
	}
	return "not_requested"
}

// seasonStates maps season numbers to their state, from the season
// statuses and the standing (non-4K) requests of the show.
func seasonStates(t *TV) map[int]seasonState {
	out := map[int]seasonState{}
	mi := t.MediaInfo
	if mi == nil {
		return out
	}
	if mi.Status == StatusAvailable {
		// An available show has every regular season; specials (season 0)
		// are tracked on their own.
		for _, sn := range t.Seasons {
			if sn.SeasonNumber > 0 {
				out[sn.SeasonNumber] = seasonAvailable
			}
		}
	}
	for _, r := range mi.Requests {
		if r.Is4K || !r.Status.Active() {
			continue
		}
		st := seasonRequested
		if r.Status == RequestApproved {
			st = seasonApproved
		}
		for _, sr := range r.Seasons {
			if sr.Status == RequestDeclined || sr.Status == RequestFailed {
				continue
			}
			out[sr.SeasonNumber] = max(out[sr.SeasonNumber], st)
		}
	}
	for _, si := range mi.Seasons {
		var st seasonState
		switch si.Status {
		case StatusPending:
			st = seasonRequested
		case StatusProcessing:
			st = seasonProcessing
		case StatusPartiallyAvailable:
			st = seasonPartial
		case StatusAvailable:
			st = seasonAvailable
		}
		out[si.SeasonNumber] = max(out[si.SeasonNumber], st)
	}
	return out
}

// request_media

type requestResult struct {
	Result            string `json:"result"`
	MediaType         string `json:"media_type"`
	TMDBID            int    `json:"tmdb_id"`
	Title             string `json:"title"`
	Year              string `json:"year,omitempty"`
	RequestID         int    `json:"request_id,omitempty"`
	RequestStatus     string `json:"request_status,omitempty"`
	RequestedBy       string `json:"requested_by,omitempty"`
	SeasonsRequested  []int  `json:"seasons_requested,omitempty"`
	AvailableSeasons  []int  `json:"already_available_seasons,omitempty"`
	RequestedSeasons  []int  `json:"already_requested_seasons,omitempty"`
	AllSeasonsRequest bool   `json:"all_seasons,omitempty"`
	Message           string `json:"message"`
}

// Results of request_media.
const (
	resultRequested        = "requested"
	resultAlreadyAvailable = "already_available"
	resultAlreadyRequested = "already_requested"
)

// parseSeasons reads the seasons argument: absent or "all" → all; an array
// of season numbers otherwise.
func parseSeasons(raw json.RawMessage) (all bool, seasons []int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return true, nil, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if strings.EqualFold(strings.TrimSpace(str), "all") {
			return true, nil, nil
		}
		return false, nil, fmt.Errorf("invalid arguments: seasons must be an array of season numbers or \"all\", got %q", str)
	}
	var list []int
	if err := json.Unmarshal(raw, &list); err != nil {
		return false, nil, errors.New("invalid arguments: seasons must be an array of season numbers (integers) or \"all\"")
	}
	if len(list) == 0 {
		return false, nil, errors.New("invalid arguments: seasons is empty; give season numbers or \"all\"")
	}
	for _, n := range list {
		if n < 0 {
			return false, nil, fmt.Errorf("invalid arguments: season number %d is negative", n)
		}
	}
	slices.Sort(list)
	return false, slices.Compact(list), nil
}

func (s *skill) request(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		MediaType string          `json:"media_type"`
		TMDBID    *int            `json:"tmdb_id"`
		Seasons   json.RawMessage `json:"seasons"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if err := checkMedia(a.MediaType, a.TMDBID); err != nil {
		return "", err
	}
	if a.MediaType == MediaMovie {
		if len(bytes.TrimSpace(a.Seasons)) > 0 && string(bytes.TrimSpace(a.Seasons)) != "null" {
			return "", errors.New("invalid arguments: seasons apply to TV shows only")
		}
		return s.requestMovie(ctx, *a.TMDBID)
	}
	all, seasons, err := parseSeasons(a.Seasons)
	if err != nil {
		return "", err
	}
	return s.requestTV(ctx, *a.TMDBID, all, seasons)
}

func (s *skill) requestMovie(ctx context.Context, id int) (string, error) {
	m, err := s.c.Movie(ctx, id)
	if err != nil {
		return "", err
	}
	res := requestResult{MediaType: MediaMovie, TMDBID: m.ID, Title: m.Title, Year: year(m.ReleaseDate)}
	name := label(m.Title, paren(res.Year))
	if mi := m.MediaInfo; mi != nil {
		switch {
		case mi.Status == StatusAvailable || mi.Status == StatusPartiallyAvailable:
			res.Result = resultAlreadyAvailable
			res.Message = name + " is already available in the library; nothing was requested."
			return compact(res)
		case mi.Status == StatusPending || mi.Status == StatusProcessing || activeRequest(mi) != nil:
			return compact(alreadyRequested(res, name, mi))
		}
	}
	created, err := s.c.CreateRequest(ctx, NewRequest{MediaType: MediaMovie, MediaID: m.ID})
	if errors.Is(err, ErrAlreadyRequested) {
		return compact(alreadyRequested(res, name, m.MediaInfo))
	}
	if err != nil {
		return "", err
	}
	res.Result = resultRequested
	res.RequestID, res.RequestStatus = created.ID, created.Status.String()
	res.Message = "Requested " + name + "; " + approvalText(created.Status)
	return compact(res)
}

func alreadyRequested(res requestResult, name string, mi *MediaInfo) requestResult {
	res.Result = resultAlreadyRequested
	state := "it is waiting for approval"
	if mi != nil && mi.Status == StatusProcessing {
		state = "it is approved and being downloaded"
	}
	if r := activeRequest(mi); r != nil {
		res.RequestID, res.RequestStatus, res.RequestedBy = r.ID, r.Status.String(), r.RequestedBy.Name()
		if r.Status == RequestApproved && (mi.Status != StatusProcessing) {
			state = "it is approved"
		}
		if res.RequestedBy != "" {
			state += " (requested by " + res.RequestedBy + ")"
		}
	}
	res.Message = name + " was already requested; " + state + ". Nothing new was requested."
	return res
}

func paren(y string) string {
	if y == "" {
		return ""
	}
	return "(" + y + ")"
}

func approvalText(st RequestStatus) string {
	if st == RequestApproved {
		return "the request was approved automatically and the title will be downloaded."
	}
	return "the request is " + strings.ReplaceAll(st.String(), "_", " ") + "."
}

func (s *skill) requestTV(ctx context.Context, id int, all bool, asked []int) (string, error) {
	t, err := s.c.TV(ctx, id)
	if err != nil {
		return "", err
	}
	res := requestResult{MediaType: MediaTV, TMDBID: t.ID, Title: t.Name, Year: year(t.FirstAirDate)}
	name := label(t.Name, paren(res.Year))
	exists := map[int]bool{}
	var regular []int
	for _, sn := range t.Seasons {
		exists[sn.SeasonNumber] = true
		if sn.SeasonNumber > 0 {
			regular = append(regular, sn.SeasonNumber)
		}
	}
	if all {
		asked = regular
		if len(asked) == 0 && t.MediaInfo != nil && t.MediaInfo.Status == StatusAvailable {
			res.Result = resultAlreadyAvailable
			res.Message = name + " is already available in the library; nothing was requested."
			return compact(res)
		}
		if len(asked) == 0 {
			return "", fmt.Errorf("%s lists no seasons to request", name)
		}
	} else if len(t.Seasons) > 0 {
		for _, n := range asked {
			if !exists[n] {
				return "", fmt.Errorf("invalid arguments: %s has no season %d (seasons: %s)", name, n, joinInts(sortedKeys(exists)))
			}
		}
	}
	states := seasonStates(t)
	var free []int
	for _, n := range asked {
		switch st := states[n]; {
		case st >= seasonPartial:
			res.AvailableSeasons = append(res.AvailableSeasons, n)
		case st > seasonFree:
			res.RequestedSeasons = append(res.RequestedSeasons, n)
		default:
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		return compact(nothingToRequest(res, name, all))
	}
	nr := NewRequest{MediaType: MediaTV, MediaID: t.ID, Seasons: free}
	if all && len(free) == len(asked) {
		nr.AllSeasons, nr.Seasons = true, nil
		res.AllSeasonsRequest = true
	}
	created, err := s.c.CreateRequest(ctx, nr)
	if errors.Is(err, ErrAlreadyRequested) {
		res.RequestedSeasons = append(res.RequestedSeasons, free...)
		slices.Sort(res.RequestedSeasons)
		return compact(nothingToRequest(res, name, all))
	}
	if err != nil {
		return "", err
	}
	res.Result = resultRequested
	res.RequestID, res.RequestStatus = created.ID, created.Status.String()
	res.SeasonsRequested = seasonNumbers(created.Seasons)
	if len(res.SeasonsRequested) == 0 {
		res.SeasonsRequested = free
	}
	msg := fmt.Sprintf("Requested %s, %s; %s", name, seasonsText(res.SeasonsRequested), approvalText(created.Status))
	if len(res.AvailableSeasons) > 0 {
		msg += " Already available, not requested: " + seasonsText(res.AvailableSeasons) + "."
	}
	if len(res.RequestedSeasons) > 0 {
		msg += " Already requested before: " + seasonsText(res.RequestedSeasons) + "."
	}
	res.Message = msg
	return compact(res)
}

func nothingToRequest(res requestResult, name string, all bool) requestResult {
	what := seasonsText(append(append([]int(nil), res.AvailableSeasons...), res.RequestedSeasons...))
	if all {
		what = "every season"
	}
	switch {
	case len(res.RequestedSeasons) == 0:
		res.Result = resultAlreadyAvailable
		res.Message = fmt.Sprintf("%s: %s already available in the library; nothing was requested.", name, what)
	case len(res.AvailableSeasons) == 0:
		res.Result = resultAlreadyRequested
		res.Message = fmt.Sprintf("%s: %s already requested; nothing new was requested.", name, what)
	default:
		res.Result = resultAlreadyRequested
		res.Message = fmt.Sprintf("%s: %s already available, %s already requested; nothing new was requested.",
			name, seasonsText(res.AvailableSeasons), seasonsText(res.RequestedSeasons))
	}
	return res
}

func seasonsText(ns []int) string {
	if len(ns) == 1 {
		return "season " + strconv.Itoa(ns[0])
	}
	return "seasons " + joinInts(ns)
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// list_requests

type listedRequest struct {
	ID            int    `json:"id"`
	MediaType     string `json:"media_type"`
	TMDBID        int    `json:"tmdb_id"`
	Title         string `json:"title,omitempty"`
	Year          string `json:"year,omitempty"`
	RequestStatus string `json:"request_status"`
	MediaStatus   string `json:"media_status"`
	Seasons       []int  `json:"seasons,omitempty"`
	FourK         bool   `json:"is_4k,omitempty"`
	RequestedBy   string `json:"requested_by,omitempty"`
	CreatedAt     string `json:"created_at,omitempty"`
}

type listOut struct {
	Filter   string          `json:"filter"`
	Page     int             `json:"page"`
	Pages    int             `json:"pages"`
	Total    int             `json:"total"`
	Requests []listedRequest `json:"requests"`
	Message  string          `json:"message,omitempty"`
}

func (s *skill) listRequests(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Filter string `json:"filter"`
		Take   *int   `json:"take"`
		Skip   *int   `json:"skip"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if a.Filter == "" {
		a.Filter = "all"
	}
	if !validFilter(a.Filter) {
		return "", fmt.Errorf("invalid arguments: filter must be one of %s, got %q", strings.Join(RequestFilters(), ", "), a.Filter)
	}
	take, skip := defaultTake, 0
	if a.Take != nil {
		if *a.Take < 1 || *a.Take > maxTake {
			return "", fmt.Errorf("invalid arguments: take must be between 1 and %d", maxTake)
		}
		take = *a.Take
	}
	if a.Skip != nil {
		if *a.Skip < 0 {
			return "", errors.New("invalid arguments: skip must not be negative")
		}
		skip = *a.Skip
	}
	page, err := s.c.Requests(ctx, RequestQuery{Take: take, Skip: skip, Filter: a.Filter, Sort: "added"})
	if err != nil {
		return "", err
	}
	out := listOut{Filter: a.Filter, Page: page.PageInfo.Page, Pages: page.PageInfo.Pages, Total: page.PageInfo.Results, Requests: []listedRequest{}}
	for _, r := range page.Results {
		lr := listedRequest{
			ID: r.ID, MediaType: r.Type, RequestStatus: r.Status.String(), Seasons: seasonNumbers(r.Seasons),
			FourK: r.Is4K, RequestedBy: r.RequestedBy.Name(), CreatedAt: r.CreatedAt,
			MediaStatus: StatusUnknown.String(),
		}
		if r.Media != nil {
			lr.TMDBID = r.Media.TMDBID
			if lr.MediaType == "" {
				lr.MediaType = r.Media.MediaType
			}
			st := r.Media.Status
			if r.Is4K {
				st = r.Media.Status4K
			}
			lr.MediaStatus = st.String()
		}
		out.Requests = append(out.Requests, lr)
	}
	s.addTitles(ctx, out.Requests)
	if len(out.Requests) == 0 {
		out.Message = fmt.Sprintf("No requests match the filter %q.", a.Filter)
	}
	return compact(out)
}

// addTitles fills in titles: request lists carry only TMDB ids. A title that
// cannot be fetched is left empty.
func (s *skill) addTitles(ctx context.Context, rs []listedRequest) {
	type key struct {
		kind string
		id   int
	}
	type named struct{ title, year string }
	keys := map[key]*named{}
	for _, r := range rs {
		if r.TMDBID > 0 && (r.MediaType == MediaMovie || r.MediaType == MediaTV) {
			keys[key{r.MediaType, r.TMDBID}] = &named{}
		}
	}
	sem := make(chan struct{}, titleFetchers)
	var wg sync.WaitGroup
	for k, n := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if k.kind == MediaMovie {
				if m, err := s.c.Movie(ctx, k.id); err == nil {
					n.title, n.year = m.Title, year(m.ReleaseDate)
				}
				return
			}
			if t, err := s.c.TV(ctx, k.id); err == nil {
				n.title, n.year = t.Name, year(t.FirstAirDate)
			}
		})
	}
	wg.Wait()
	for i := range rs {
		if n := keys[key{rs[i].MediaType, rs[i].TMDBID}]; n != nil {
			rs[i].Title, rs[i].Year = n.title, n.year
		}
	}
}
