package seerrtest

import (
	"sort"
	"strconv"
)

// genreID returns the TMDB id of a genre of the catalogue.
func genreID(name string) int {
	switch name {
	case "Action":
		return 28
	case "Adventure":
		return 12
	case "Science Fiction":
		return 878
	case "Drama":
		return 18
	case "History":
		return 36
	case "Crime":
		return 80
	case "Mystery":
		return 9648
	case "Sci-Fi & Fantasy":
		return 10765
	case "Action & Adventure":
		return 10759
	}
	return 0
}

// seed fills the catalogue, the users and the existing requests.
func (s *Server) seed() {
	s.admin = user{id: 1, name: "Admin", email: "admin@example.com"}
	alice := user{id: 2, name: "alice", email: "alice@example.com"}
	bob := user{id: 3, name: "bob", email: "bob@example.com"}
	carol := user{id: 4, name: "carol", email: "carol@example.com"}

	add := func(t *title) *title { s.titles[t.kind+"/"+strconv.Itoa(t.id)] = t; return t }
	inception := add(&title{kind: "movie", id: Inception, name: "Inception", original: "Inception", date: "2010-07-15",
		overview: "Cobb, a skilled thief who commits corporate espionage by infiltrating the subconscious of his targets is offered a chance to regain his old life as payment for a task considered to be impossible: \"inception\", the implantation of another person's idea into a target's subconscious.",
		genres:   []string{"Action", "Science Fiction", "Adventure"}, runtime: 148, imdbID: "tt1375666", showStatus: "Released", popularity: 82.4, vote: 8.37})
	interstellar := add(&title{kind: "movie", id: Interstellar, name: "Interstellar", original: "Interstellar", date: "2014-11-05",
		overview: "The adventures of a group of explorers who make use of a newly discovered wormhole to surpass the limitations on human space travel and conquer the vast distances involved in an interstellar voyage.",
		genres:   []string{"Adventure", "Drama", "Science Fiction"}, runtime: 169, imdbID: "tt0816692", showStatus: "Released", popularity: 140.2, vote: 8.45})
	matrix := add(&title{kind: "movie", id: TheMatrix, name: "The Matrix", original: "The Matrix", date: "1999-03-31",
		overview: "Set in the 22nd century, The Matrix tells the story of a computer hacker who joins a group of underground insurgents fighting the vast and powerful computers who now rule the earth.",
		genres:   []string{"Action", "Science Fiction"}, runtime: 136, imdbID: "tt0133093", showStatus: "Released", popularity: 76.9, vote: 8.22})
	add(&title{kind: "movie", id: 604, name: "The Matrix Reloaded", original: "The Matrix Reloaded", date: "2003-05-15",
		overview: "Six months after the events depicted in The Matrix, Neo has proved to be a good omen for the free humans, as more and more humans are being freed from the matrix and brought to Zion, the one and only stronghold of the Resistance.",
		genres:   []string{"Adventure", "Action", "Science Fiction"}, runtime: 138, imdbID: "tt0234215", showStatus: "Released", popularity: 41.3, vote: 7.1})
	oppenheimer := add(&title{kind: "movie", id: Oppenheimer, name: "Oppenheimer", original: "Oppenheimer", date: "2023-07-19",
		overview: "The story of J. Robert Oppenheimer's role in the development of the atomic bomb during World War II.",
		genres:   []string{"Drama", "History"}, runtime: 181, imdbID: "tt15398776", showStatus: "Released", popularity: 95.1, vote: 8.06})
	add(&title{kind: "movie", id: Dune, name: "Dune", original: "Dune", date: "2021-09-15",
		overview: "Paul Atreides, a brilliant and gifted young man born into a great destiny beyond his understanding, must travel to the most dangerous planet in the universe to ensure the future of his family and his people.",
		genres:   []string{"Science Fiction", "Adventure"}, runtime: 155, imdbID: "tt1160419", showStatus: "Released", popularity: 88.7, vote: 7.78})
	breaking := add(&title{kind: "tv", id: BreakingBad, name: "Breaking Bad", original: "Breaking Bad", date: "2008-01-20",
		overview: "Walter White, a New Mexico chemistry teacher, is diagnosed with Stage III cancer and given a prognosis of only two years left to live. He becomes filled with a sense of fearlessness and an unrelenting desire to secure his family's financial future at any cost as he enters the dangerous world of drugs and crime.",
		genres:   []string{"Drama", "Crime"}, showStatus: "Ended", popularity: 210.5, vote: 8.9,
		seasons: []season{{0, 11, "Specials", "2009-02-17"}, {1, 7, "Season 1", "2008-01-20"}, {2, 13, "Season 2", "2009-03-08"},
			{3, 13, "Season 3", "2010-03-21"}, {4, 13, "Season 4", "2011-07-17"}, {5, 16, "Season 5", "2012-07-15"}}})
	stranger := add(&title{kind: "tv", id: StrangerThings, name: "Stranger Things", original: "Stranger Things", date: "2016-07-15",
		overview: "When a young boy vanishes, a small town uncovers a mystery involving secret experiments, terrifying supernatural forces, and one strange little girl.",
		genres:   []string{"Drama", "Sci-Fi & Fantasy", "Mystery"}, showStatus: "Ended", popularity: 180.3, vote: 8.6,
		seasons: []season{{1, 8, "Stranger Things", "2016-07-15"}, {2, 9, "Stranger Things 2", "2017-10-27"}, {3, 8, "Stranger Things 3", "2019-07-04"},
			{4, 9, "Stranger Things 4", "2022-05-27"}, {5, 8, "Stranger Things 5", "2025-11-26"}}})
	add(&title{kind: "tv", id: TheLastOfUs, name: "The Last of Us", original: "The Last of Us", date: "2023-01-15",
		overview: "Twenty years after modern civilization has been destroyed, Joel, a hardened survivor, is hired to smuggle Ellie, a 14-year-old girl, out of an oppressive quarantine zone. What starts as a small job soon becomes a brutal and heartbreaking journey, as they both must traverse the United States and depend on each other for survival.",
		genres:   []string{"Drama", "Action & Adventure"}, showStatus: "Returning Series", popularity: 150.8, vote: 8.5,
		seasons: []season{{1, 9, "Season 1", "2023-01-15"}, {2, 7, "Season 2", "2025-04-13"}}})
	s.people = []person{{id: LeonardoDiCaprio, name: "Leonardo DiCaprio", knownFor: []int{Inception}}}
	s.trending = []string{"movie/872585", "tv/66732", "tv/100088", "movie/438631"}

	mk := func(t *title, status int, created string, seasons map[int]int) {
		s.nextMedia++
		if seasons == nil {
			seasons = map[int]int{}
		}
		t.media = &media{id: s.nextMedia, status: status, seasons: seasons, created: created, modified: created}
	}
	mk(inception, mediaAvailable, "2024-03-02T18:04:11.000Z", nil)
	mk(interstellar, mediaUnknown, "2024-04-11T09:30:00.000Z", nil)
	mk(oppenheimer, mediaProcessing, "2024-06-20T21:12:45.000Z", nil)
	mk(stranger, mediaPartial, "2023-12-01T10:00:00.000Z", map[int]int{1: mediaAvailable, 2: mediaAvailable, 3: mediaAvailable, 4: mediaPending, 5: mediaUnknown})
	mk(matrix, mediaPending, "2024-11-02T19:22:10.000Z", nil)
	mk(breaking, mediaAvailable, "2023-10-08T07:45:00.000Z", map[int]int{1: mediaAvailable, 2: mediaAvailable, 3: mediaAvailable, 4: mediaAvailable, 5: mediaAvailable})
	breaking.media.tvdbID, stranger.media.tvdbID = 81189, 305288

	req := func(t *title, status int, by user, mod *user, created string, seasons ...int) {
		s.nextRequest++
		s.requests = append(s.requests, &request{id: s.nextRequest, status: status, t: t, seasons: seasons, by: by, modBy: mod, created: created, modified: created})
	}
	req(inception, reqApproved, alice, &s.admin, "2024-03-02T18:04:11.000Z")
	req(interstellar, reqDeclined, carol, &s.admin, "2024-04-11T09:30:00.000Z")
	req(oppenheimer, reqApproved, bob, &s.admin, "2024-06-20T21:12:45.000Z")
	req(stranger, reqPending, bob, nil, "2024-09-14T16:05:31.000Z", 4)
	req(matrix, reqPending, alice, nil, "2024-11-02T19:22:10.000Z")
}

func genresJSON(names []string) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, map[string]any{"id": genreID(n), "name": n})
	}
	return out
}

func genreIDList(names []string) []int {
	out := []int{}
	for _, n := range names {
		out = append(out, genreID(n))
	}
	return out
}

func (s *Server) userJSON(u user) map[string]any {
	count := 0
	for _, r := range s.requests {
		if r.by.id == u.id {
			count++
		}
	}
	perms := 32
	if u.id == 1 {
		perms = 2
	}
	return map[string]any{
		"permissions": perms, "id": u.id, "email": u.email, "plexUsername": nil, "jellyfinUsername": u.name,
		"username": nil, "recoveryLinkExpirationDate": nil, "userType": 3, "plexId": nil,
		"jellyfinUserId": "5f1c0e7a9b2d4c3e8f6a" + strconv.Itoa(1000+u.id), "jellyfinDeviceId": nil,
		"avatar": "/avatarproxy/5f1c0e7a9b2d4c3e8f6a" + strconv.Itoa(1000+u.id), "movieQuotaLimit": nil,
		"movieQuotaDays": nil, "tvQuotaLimit": nil, "tvQuotaDays": nil, "createdAt": "2023-09-01T12:00:00.000Z",
		"updatedAt": "2024-01-05T08:30:00.000Z", "requestCount": count, "displayName": u.name,
	}
}

// mediaJSON renders Seerr's media record; withRequests adds its requests as
// the details routes do.
func (s *Server) mediaJSON(t *title, withRequests bool) map[string]any {
	m := t.media
	var tvdb any
	if m.tvdbID != 0 {
		tvdb = m.tvdbID
	}
	var added any
	if m.status == mediaAvailable || m.status == mediaPartial {
		added = m.created
	}
	seasons := []any{}
	nums := make([]int, 0, len(m.seasons))
	for n := range m.seasons {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	for i, n := range nums {
		seasons = append(seasons, map[string]any{
			"id": m.id*100 + i, "seasonNumber": n, "status": m.seasons[n], "status4k": mediaUnknown,
			"createdAt": m.created, "updatedAt": m.modified,
		})
	}
	out := map[string]any{
		"downloadStatus": []any{}, "downloadStatus4k": []any{}, "id": m.id, "mediaType": t.kind,
		"tmdbId": t.id, "tvdbId": tvdb, "imdbId": nil, "status": m.status, "status4k": mediaUnknown,
		"createdAt": m.created, "updatedAt": m.modified, "lastSeasonChange": m.created, "mediaAddedAt": added,
		"serviceId": nil, "serviceId4k": nil, "externalServiceId": nil, "externalServiceId4k": nil,
		"externalServiceSlug": nil, "externalServiceSlug4k": nil, "ratingKey": nil, "ratingKey4k": nil,
		"jellyfinMediaId": nil, "jellyfinMediaId4k": nil, "seasons": seasons,
	}
	if withRequests {
		reqs := []any{}
		for _, r := range s.requests {
			if r.t == t {
				reqs = append(reqs, s.requestJSON(r, false))
			}
		}
		out["requests"] = reqs
	}
	return out
}

func (s *Server) requestJSON(r *request, withMedia bool) map[string]any {
	seasons := []any{}
	for i, n := range r.seasons {
		seasons = append(seasons, map[string]any{
			"id": r.id*100 + i, "seasonNumber": n, "status": r.status, "createdAt": r.created, "updatedAt": r.modified,
		})
	}
	var mod any
	if r.modBy != nil {
		mod = s.userJSON(*r.modBy)
	}
	out := map[string]any{
		"id": r.id, "status": r.status, "createdAt": r.created, "updatedAt": r.modified, "type": r.t.kind,
		"is4k": false, "serverId": nil, "profileId": nil, "rootFolder": nil, "languageProfileId": nil,
		"tags": nil, "isAutoRequest": false, "seasons": seasons, "modifiedBy": mod,
		"requestedBy": s.userJSON(r.by), "seasonCount": len(r.seasons),
	}
	if withMedia {
		out["media"] = s.mediaJSON(r.t, false)
		out["canRemove"] = false
	}
	return out
}

// resultJSON renders a search/discover result.
func (s *Server) resultJSON(t *title) map[string]any {
	out := map[string]any{
		"id": t.id, "mediaType": t.kind, "adult": false, "genreIds": genreIDList(t.genres), "originalLanguage": "en",
		"overview": t.overview, "popularity": t.popularity, "voteAverage": t.vote, "voteCount": 12000 + t.id%5000,
		"backdropPath": "/" + strconv.Itoa(t.id) + "b.jpg", "posterPath": "/" + strconv.Itoa(t.id) + "p.jpg",
	}
	if t.kind == "movie" {
		out["title"], out["originalTitle"], out["releaseDate"], out["video"] = t.name, t.original, t.date, false
	} else {
		out["name"], out["originalName"], out["firstAirDate"], out["originCountry"] = t.name, t.original, t.date, []string{"US"}
	}
	if t.media != nil {
		out["mediaInfo"] = s.mediaJSON(t, false)
	}
	return out
}

func (s *Server) personJSON(p person) map[string]any {
	known := []any{}
	for _, id := range p.knownFor {
		if t := s.titles["movie/"+strconv.Itoa(id)]; t != nil {
			known = append(known, s.resultJSON(t))
		}
	}
	return map[string]any{
		"id": p.id, "mediaType": "person", "name": p.name, "adult": false, "popularity": 35.2,
		"profilePath": "/" + strconv.Itoa(p.id) + ".jpg", "knownFor": known,
	}
}

func (s *Server) detailsJSON(t *title) map[string]any {
	out := map[string]any{
		"id": t.id, "backdropPath": "/" + strconv.Itoa(t.id) + "b.jpg", "posterPath": "/" + strconv.Itoa(t.id) + "p.jpg",
		"genres": genresJSON(t.genres), "homepage": "", "originalLanguage": "en", "overview": t.overview,
		"popularity": t.popularity, "productionCompanies": []any{}, "productionCountries": []any{},
		"spokenLanguages": []any{map[string]any{"englishName": "English", "iso_639_1": "en", "name": "English"}},
		"status":          t.showStatus, "tagline": "", "voteAverage": t.vote, "voteCount": 12000 + t.id%5000,
		"credits": map[string]any{"cast": []any{}, "crew": []any{}}, "watchProviders": []any{},
	}
	if t.kind == "movie" {
		out["imdbId"], out["adult"], out["budget"], out["title"], out["originalTitle"] = t.imdbID, false, 160000000, t.name, t.original
		out["releaseDate"], out["runtime"], out["revenue"], out["video"] = t.date, t.runtime, 825532764, false
		out["releases"] = map[string]any{"results": []any{}}
		out["externalIds"] = map[string]any{"imdbId": t.imdbID, "facebookId": nil, "instagramId": nil, "twitterId": nil}
	} else {
		seasons := []any{}
		episodes := 0
		last := t.date
		for _, sn := range t.seasons {
			seasons = append(seasons, map[string]any{
				"airDate": sn.airDate, "episodeCount": sn.episodes, "id": t.id*10 + sn.number, "name": sn.name,
				"overview": "", "posterPath": "/" + strconv.Itoa(t.id) + "s" + strconv.Itoa(sn.number) + ".jpg", "seasonNumber": sn.number,
			})
			if sn.number > 0 {
				episodes += sn.episodes
				last = sn.airDate
			}
		}
		regular := 0
		for _, sn := range t.seasons {
			if sn.number > 0 {
				regular++
			}
		}
		out["name"], out["originalName"], out["firstAirDate"], out["lastAirDate"] = t.name, t.original, t.date, last
		out["inProduction"], out["numberOfSeasons"], out["numberOfEpisodes"] = t.showStatus == "Returning Series", regular, episodes
		out["seasons"], out["episodeRunTime"], out["languages"], out["originCountry"] = seasons, []int{50}, []string{"en"}, []string{"US"}
		out["networks"], out["createdBy"], out["type"] = []any{}, []any{}, "Scripted"
		out["contentRatings"], out["keywords"] = map[string]any{"results": []any{}}, []any{}
		out["externalIds"] = map[string]any{"imdbId": nil, "tvdbId": nil}
	}
	if t.media != nil {
		out["mediaInfo"] = s.mediaJSON(t, true)
	}
	return out
}
