package seerrtools

import (
	"fmt"
	"strings"

	"agentchat/internal/seerr"
)

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

// pageOut is the answer of search_media and get_trending.
type pageOut struct {
	Query        string `json:"query,omitempty"`
	Page         int    `json:"page"`
	TotalPages   int    `json:"total_pages"`
	TotalResults int    `json:"total_results"`
	Results      []item `json:"results"`
	Message      string `json:"message,omitempty"`
}

// newPageOut is the page p as shown to the model.
func newPageOut(p *seerr.Page) pageOut {
	return pageOut{Page: p.Page, TotalPages: p.TotalPages, TotalResults: p.TotalResults, Results: toItems(p.Results)}
}

func toItems(rs []seerr.Result) []item {
	out := make([]item, 0, len(rs))
	for _, r := range rs {
		it := item{MediaType: r.MediaType, TMDBID: r.ID, Title: r.DisplayTitle()}
		if r.MediaType == seerr.MediaPerson {
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

// label is a title followed by yr, its year in parentheses, when known.
func label(title, yr string) string {
	if yr == "" {
		return title
	}
	return title + " " + yr
}

// paren puts y in parentheses, unless it is empty.
func paren(y string) string {
	if y == "" {
		return ""
	}
	return "(" + y + ")"
}

// truncate shortens s, its spaces collapsed, to about n bytes, at a word
// boundary when one is near.
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

// year returns the year of an ISO date, or "".
func year(date string) string {
	if len(date) < 4 {
		return ""
	}
	for _, c := range date[:4] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return date[:4]
}
