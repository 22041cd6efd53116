package seerrtools

import (
	"context"
	"sync"

	"agentchat/internal/seerr"
)

// addTitles fills in titles: request lists carry only TMDB ids. A title that
// cannot be fetched is left empty.
func addTitles(ctx context.Context, c *seerr.Client, rs []listedRequest) {
	type key struct {
		kind string
		id   int
	}
	type named struct{ title, year string }
	keys := map[key]*named{}
	for _, r := range rs {
		if r.TMDBID > 0 && (r.MediaType == seerr.MediaMovie || r.MediaType == seerr.MediaTV) {
			keys[key{r.MediaType, r.TMDBID}] = &named{}
		}
	}
	sem := make(chan struct{}, titleFetchers)
	var wg sync.WaitGroup
	for k, n := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if k.kind == seerr.MediaMovie {
				if m, err := c.Movie(ctx, k.id); err == nil {
					n.title, n.year = m.Title, year(m.ReleaseDate)
				}
				return
			}
			if t, err := c.TV(ctx, k.id); err == nil {
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
