package seerrtools

import "agentchat/internal/seerr"

// activeRequest returns the newest standing request of a title, if any.
func activeRequest(mi *seerr.MediaInfo) *seerr.Request {
	if mi == nil {
		return nil
	}
	var best *seerr.Request
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
func availability(mi *seerr.MediaInfo) (status, note string) {
	if mi == nil {
		return seerr.StatusUnknown.String(), ""
	}
	switch mi.Status {
	case seerr.StatusAvailable:
		return mi.Status.String(), "already available in the library"
	case seerr.StatusPartiallyAvailable:
		return mi.Status.String(), "partly available in the library (some seasons or episodes)"
	case seerr.StatusProcessing:
		return mi.Status.String(), "already requested and approved; being downloaded"
	case seerr.StatusPending:
		return mi.Status.String(), "already requested; waiting for approval"
	case seerr.StatusBlacklisted:
		return mi.Status.String(), "marked blacklisted or deleted in Seerr"
	case seerr.StatusDeleted:
		return mi.Status.String(), "was removed from the library"
	}
	if r := activeRequest(mi); r != nil {
		if r.Status == seerr.RequestApproved {
			return seerr.StatusProcessing.String(), "already requested and approved"
		}
		return seerr.StatusPending.String(), "already requested; waiting for approval"
	}
	return mi.Status.String(), ""
}
