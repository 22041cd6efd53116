package seerrtools

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"agentchat/internal/seerr"
)

// requestTV requests the seasons asked of the show id (all its regular
// seasons when all), but those already available or requested.
func requestTV(ctx context.Context, c *seerr.Client, id int, all bool, asked []int) (requestResult, error) {
	t, err := c.TV(ctx, id)
	if err != nil {
		return requestResult{}, err
	}
	res := requestResult{MediaType: seerr.MediaTV, TMDBID: t.ID, Title: t.Name, Year: year(t.FirstAirDate)}
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
		if len(asked) == 0 && t.MediaInfo != nil && t.MediaInfo.Status == seerr.StatusAvailable {
			res.Result = resultAlreadyAvailable
			res.Message = name + " is already available in the library; nothing was requested."
			return res, nil
		}
		if len(asked) == 0 {
			return requestResult{}, fmt.Errorf("%s lists no seasons to request", name)
		}
	} else if len(t.Seasons) > 0 {
		for _, n := range asked {
			if !exists[n] {
				return requestResult{}, fmt.Errorf("invalid arguments: %s has no season %d (seasons: %s)", name, n, joinInts(sortedKeys(exists)))
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
		return nothingToRequest(res, name, all), nil
	}
	nr := seerr.NewRequest{MediaType: seerr.MediaTV, MediaID: t.ID, Seasons: free}
	if all && len(free) == len(asked) {
		nr.AllSeasons, nr.Seasons = true, nil
		res.AllSeasonsRequest = true
	}
	created, err := c.CreateRequest(ctx, nr)
	if errors.Is(err, seerr.ErrAlreadyRequested) {
		res.RequestedSeasons = append(res.RequestedSeasons, free...)
		slices.Sort(res.RequestedSeasons)
		return nothingToRequest(res, name, all), nil
	}
	if err != nil {
		return requestResult{}, err
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
	return res, nil
}

// nothingToRequest is res for a show whose asked seasons are all
// available or requested already.
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
