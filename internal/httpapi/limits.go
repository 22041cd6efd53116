package httpapi

import (
	"errors"
	"net/http"

	"agentchat/internal/store"
)

// LimitStatus is the status of a creation refused by a per-user limit
// (store.Limits): 409, the user's current state conflicts with one more.
const LimitStatus = http.StatusConflict

// LimitFailure returns the 409 answer of a creation refused by a per-user
// limit (a *store.LimitError in err's chain): the limit and how to free
// room. It returns nil when err is no such refusal.
func LimitFailure(err error) *StatusError {
	var le *store.LimitError
	if !errors.As(err, &le) {
		return nil
	}
	return Errorf(LimitStatus, "%s", le.LimitMessage())
}
