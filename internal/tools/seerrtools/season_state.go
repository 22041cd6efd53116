package seerrtools

import "agentchat/internal/seerr"

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

// String is the status of the season as shown to the model.
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
func seasonStates(t *seerr.TV) map[int]seasonState {
	out := map[int]seasonState{}
	mi := t.MediaInfo
	if mi == nil {
		return out
	}
	if mi.Status == seerr.StatusAvailable {
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
		if r.Status == seerr.RequestApproved {
			st = seasonApproved
		}
		for _, sr := range r.Seasons {
			if sr.Status == seerr.RequestDeclined || sr.Status == seerr.RequestFailed {
				continue
			}
			out[sr.SeasonNumber] = max(out[sr.SeasonNumber], st)
		}
	}
	for _, si := range mi.Seasons {
		var st seasonState
		switch si.Status {
		case seerr.StatusPending:
			st = seasonRequested
		case seerr.StatusProcessing:
			st = seasonProcessing
		case seerr.StatusPartiallyAvailable:
			st = seasonPartial
		case seerr.StatusAvailable:
			st = seasonAvailable
		}
		out[si.SeasonNumber] = max(out[si.SeasonNumber], st)
	}
	return out
}
