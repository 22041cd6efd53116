package seerr

import (
	"encoding/json"
	"fmt"
)

// Media types of the Seerr API.
const (
	MediaMovie  = "movie"
	MediaTV     = "tv"
	MediaPerson = "person"
)

// MediaStatus is the availability of a title (or a season) in Seerr.
type MediaStatus int

// Media statuses. Overseerr calls 6 DELETED; Jellyseerr calls 6 BLACKLISTED
// and 7 DELETED.
const (
	StatusUnknown            MediaStatus = 1
	StatusPending            MediaStatus = 2
	StatusProcessing         MediaStatus = 3
	StatusPartiallyAvailable MediaStatus = 4
	StatusAvailable          MediaStatus = 5
	StatusBlacklisted        MediaStatus = 6
	StatusDeleted            MediaStatus = 7
)

// String returns a lower-case name for the model.
func (s MediaStatus) String() string {
	switch s {
	case 0, StatusUnknown:
		return "not_requested"
	case StatusPending:
		return "pending"
	case StatusProcessing:
		return "processing"
	case StatusPartiallyAvailable:
		return "partially_available"
	case StatusAvailable:
		return "available"
	case StatusBlacklisted:
		return "blacklisted_or_deleted"
	case StatusDeleted:
		return "deleted"
	}
	return fmt.Sprintf("status_%d", int(s))
}

// RequestStatus is the approval state of a request.
type RequestStatus int

// Request statuses (4 and 5 exist in newer Seerr versions).
const (
	RequestPending   RequestStatus = 1
	RequestApproved  RequestStatus = 2
	RequestDeclined  RequestStatus = 3
	RequestFailed    RequestStatus = 4
	RequestCompleted RequestStatus = 5
)

// String returns a lower-case name for the model.
func (s RequestStatus) String() string {
	switch s {
	case RequestPending:
		return "pending_approval"
	case RequestApproved:
		return "approved"
	case RequestDeclined:
		return "declined"
	case RequestFailed:
		return "failed"
	case RequestCompleted:
		return "completed"
	}
	return fmt.Sprintf("status_%d", int(s))
}

// Active reports whether the request still stands (not declined, failed
// or completed).
func (s RequestStatus) Active() bool { return s == RequestPending || s == RequestApproved }

// Result is one entry of search or discover results: a movie, a TV show or
// a person.
type Result struct {
	// ID is the TMDB id.
	ID           int     `json:"id"`
	MediaType    string  `json:"mediaType"`
	Title        string  `json:"title"`
	OriginalName string  `json:"originalName"`
	Name         string  `json:"name"`
	ReleaseDate  string  `json:"releaseDate"`
	FirstAirDate string  `json:"firstAirDate"`
	Overview     string  `json:"overview"`
	Popularity   float64 `json:"popularity"`
	VoteAverage  float64 `json:"voteAverage"`
	// KnownFor lists a person's best-known titles.
	KnownFor []Result `json:"knownFor"`
	// MediaInfo is set when Seerr knows the title (requested or in the
	// library).
	MediaInfo *MediaInfo `json:"mediaInfo"`
}

// DisplayTitle returns the title of a movie or the name of a show/person.
func (r Result) DisplayTitle() string {
	if r.Title != "" {
		return r.Title
	}
	return r.Name
}

// Date returns the release date of a movie or first air date of a show.
func (r Result) Date() string {
	if r.ReleaseDate != "" {
		return r.ReleaseDate
	}
	return r.FirstAirDate
}

// Page is a page of search or discover results.
type Page struct {
	Page         int      `json:"page"`
	TotalPages   int      `json:"totalPages"`
	TotalResults int      `json:"totalResults"`
	Results      []Result `json:"results"`
}

// MediaInfo is Seerr's own record of a title: its availability and
// requests.
type MediaInfo struct {
	ID        int          `json:"id"`
	MediaType string       `json:"mediaType"`
	TMDBID    int          `json:"tmdbId"`
	TVDBID    int          `json:"tvdbId"`
	Status    MediaStatus  `json:"status"`
	Status4K  MediaStatus  `json:"status4k"`
	Requests  []Request    `json:"requests"`
	Seasons   []SeasonInfo `json:"seasons"`
	CreatedAt string       `json:"createdAt"`
	UpdatedAt string       `json:"updatedAt"`
}

// SeasonInfo is the availability of one season.
type SeasonInfo struct {
	SeasonNumber int         `json:"seasonNumber"`
	Status       MediaStatus `json:"status"`
	Status4K     MediaStatus `json:"status4k"`
}

// User is the Seerr user who made or modified a request.
type User struct {
	ID          int    `json:"id"`
	DisplayName string `json:"displayName"`
	Username    string `json:"username"`
}

// Name returns the display name, else the user name.
func (u *User) Name() string {
	if u == nil {
		return ""
	}
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.Username
}

// Request is a media request.
type Request struct {
	ID          int             `json:"id"`
	Status      RequestStatus   `json:"status"`
	Type        string          `json:"type"`
	Is4K        bool            `json:"is4k"`
	Media       *MediaInfo      `json:"media"`
	RequestedBy *User           `json:"requestedBy"`
	ModifiedBy  *User           `json:"modifiedBy"`
	Seasons     []SeasonRequest `json:"seasons"`
	CreatedAt   string          `json:"createdAt"`
	UpdatedAt   string          `json:"updatedAt"`
}

// SeasonRequest is one season of a TV request.
type SeasonRequest struct {
	ID           int           `json:"id"`
	SeasonNumber int           `json:"seasonNumber"`
	Status       RequestStatus `json:"status"`
}

// Genre is a TMDB genre.
type Genre struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Movie is the detail of a movie.
type Movie struct {
	ID            int        `json:"id"`
	IMDbID        string     `json:"imdbId"`
	Title         string     `json:"title"`
	OriginalTitle string     `json:"originalTitle"`
	ReleaseDate   string     `json:"releaseDate"`
	Runtime       int        `json:"runtime"`
	Status        string     `json:"status"`
	Tagline       string     `json:"tagline"`
	Overview      string     `json:"overview"`
	Genres        []Genre    `json:"genres"`
	VoteAverage   float64    `json:"voteAverage"`
	MediaInfo     *MediaInfo `json:"mediaInfo"`
}

// Season is one season of a show.
type Season struct {
	ID           int    `json:"id"`
	SeasonNumber int    `json:"seasonNumber"`
	EpisodeCount int    `json:"episodeCount"`
	Name         string `json:"name"`
	AirDate      string `json:"airDate"`
}

// TV is the detail of a TV show.
type TV struct {
	ID               int        `json:"id"`
	Name             string     `json:"name"`
	OriginalName     string     `json:"originalName"`
	FirstAirDate     string     `json:"firstAirDate"`
	LastAirDate      string     `json:"lastAirDate"`
	Status           string     `json:"status"`
	InProduction     bool       `json:"inProduction"`
	NumberOfSeasons  int        `json:"numberOfSeasons"`
	NumberOfEpisodes int        `json:"numberOfEpisodes"`
	Overview         string     `json:"overview"`
	Genres           []Genre    `json:"genres"`
	VoteAverage      float64    `json:"voteAverage"`
	Seasons          []Season   `json:"seasons"`
	MediaInfo        *MediaInfo `json:"mediaInfo"`
}

// NewRequest is the body of POST /api/v1/request.
type NewRequest struct {
	// MediaType is MediaMovie or MediaTV.
	MediaType string
	// MediaID is the TMDB id.
	MediaID int
	// Seasons lists the TV seasons to request; ignored when AllSeasons.
	Seasons []int
	// AllSeasons requests every season of a show ("all").
	AllSeasons bool
	Is4K       bool
}

// MarshalJSON encodes the request as the Seerr API expects it.
func (n NewRequest) MarshalJSON() ([]byte, error) {
	body := map[string]any{"mediaType": n.MediaType, "mediaId": n.MediaID}
	if n.MediaType == MediaTV {
		if n.AllSeasons {
			body["seasons"] = "all"
		} else {
			body["seasons"] = n.Seasons
		}
	}
	if n.Is4K {
		body["is4k"] = true
	}
	return json.Marshal(body)
}

func (n NewRequest) validate() error {
	switch n.MediaType {
	case MediaMovie:
		if len(n.Seasons) > 0 || n.AllSeasons {
			return fmt.Errorf("seasons apply to tv requests only")
		}
	case MediaTV:
		if !n.AllSeasons && len(n.Seasons) == 0 {
			return fmt.Errorf("a tv request needs seasons (or all seasons)")
		}
		for _, s := range n.Seasons {
			if s < 0 {
				return fmt.Errorf("invalid season number %d", s)
			}
		}
	default:
		return fmt.Errorf("invalid media type %q (want movie or tv)", n.MediaType)
	}
	if n.MediaID <= 0 {
		return fmt.Errorf("invalid tmdb id %d", n.MediaID)
	}
	return nil
}

// RequestQuery selects requests in GET /api/v1/request.
type RequestQuery struct {
	// Take is the page size (0: server default).
	Take int
	// Skip is the number of requests to skip.
	Skip int
	// Filter is one of all, approved, available, pending, processing,
	// unavailable, failed (empty: all).
	Filter string
	// Sort is added or modified (empty: added).
	Sort string
}

// RequestFilters returns the filters GET /api/v1/request accepts.
func RequestFilters() []string {
	return []string{"all", "approved", "available", "pending", "processing", "unavailable", "failed"}
}

// PageInfo is the paging of a request list.
type PageInfo struct {
	Page     int `json:"page"`
	Pages    int `json:"pages"`
	PageSize int `json:"pageSize"`
	Results  int `json:"results"`
}

// RequestPage is a page of requests.
type RequestPage struct {
	PageInfo PageInfo  `json:"pageInfo"`
	Results  []Request `json:"results"`
}

func validFilter(f string) bool {
	if f == "" {
		return true
	}
	for _, v := range RequestFilters() {
		if v == f {
			return true
		}
	}
	return false
}
