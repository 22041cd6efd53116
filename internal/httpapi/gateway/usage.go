package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/usage"
)

// HeaderIncludeCost, set to "true" (or "1") on a chat request, adds
// usage.cost_usd to the response's usage, as stream_options.include_cost
// does for a stream.
const HeaderIncludeCost = "X-Include-Cost"

// wantsCost reports whether the request asks for the cost in its usage:
// stream_options.include_cost (read by openaiwire Convert) or
// HeaderIncludeCost.
func wantsCost(r *http.Request) bool {
	v := strings.TrimSpace(r.Header.Get(HeaderIncludeCost))
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// usageReport serves GET /v1/usage?from=&to=&group_by=: the usage of the
// calling API key (a caller with a token: of its user, every key), as the
// usage ledger has it (package usage). 400 invalid_request_error with the
// param for a bad query.
func (g *Gateway) usageReport(w http.ResponseWriter, r *http.Request) {
	if g.o.Ledger == nil {
		g.fail(w, r, errors.New("gateway: no usage ledger"))
		return
	}
	id, _ := auth.FromContext(r.Context())
	qs := r.URL.Query()
	q, err := usage.ParseQuery(id.UserID, qs.Get("from"), qs.Get("to"), qs.Get("group_by"), g.o.Now())
	if qe, ok := errors.AsType[*usage.QueryError](err); ok {
		g.fail(w, r, openaierr.Invalid(qe.Param, "%s", qe.Message))
		return
	}
	if err != nil {
		g.fail(w, r, err)
		return
	}
	q.KeyID = id.KeyID
	rep, err := usage.Ask(r.Context(), g.o.Ledger, q)
	if err != nil {
		g.fail(w, r, err)
		return
	}
	writeJSON(w, rep)
}
