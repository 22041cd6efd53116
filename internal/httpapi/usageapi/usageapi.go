// Package usageapi serves a user's usage ledger (package usage):
//
//	GET /v3/access/users/{user_id}/usage?from=&to=&group_by=day|model|key|session → 200 usage.Report
//
// from and to are days (YYYY-MM-DD, UTC, both included; default: the last
// 30 days up to today), at most 366 days apart; group_by defaults to day.
// {user_id} is "me", the caller's own id or, with a GNS3 controller, the
// caller's GNS3 user_id (package userpath); any other user is 403. A
// caller authenticated by an API key sees the usage of every key of its
// user, as the key could list them. Errors are GNS3-style {"message"}.
package usageapi

import (
	"errors"
	"net/http"
	"time"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/store"
	"agentchat/internal/usage"
)

// PathUsage is the route of a user's usage.
const PathUsage = "/v3/access/users/{user_id}/usage"

// msgOthersUsage refuses another user's usage.
const msgOthersUsage = "You can only see your own usage"

// Options tune the handlers.
type Options struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Users resolves {user_id} (nil: "me" and the caller's id only).
	Users *userpath.Resolver
	// AdminToken (ADMIN_TOKEN; empty: nobody) sets users' budgets; Auth
	// authenticates the other callers of the budget routes, which
	// authenticate themselves.
	AdminToken string
	Auth       httpapi.Authenticator
}

// Store is what the handlers read and write.
type Store interface {
	store.UsageLedger
	store.UserBudgets
}

// Handlers serves the usage and budget routes.
type Handlers struct {
	ledger  store.UsageLedger
	budgets store.UserBudgets
	o       Options
}

// New returns the usage handlers over st.
func New(st Store, o Options) *Handlers {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handlers{ledger: st, budgets: st, o: o}
}

// Routes returns the usage route and the budget routes.
func (h *Handlers) Routes() []httpapi.Route {
	return append(h.UsageRoutes(), h.BudgetRoutes()...)
}

// UsageRoutes returns GET PathUsage.
func (h *Handlers) UsageRoutes() []httpapi.Route {
	return []httpapi.Route{{Method: http.MethodGet, Path: PathUsage, Handler: httpapi.HandlerFunc(h.get).ServeHTTP}}
}

// BudgetRoutes returns GET and PUT PathBudget.
func (h *Handlers) BudgetRoutes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathBudget, Handler: httpapi.HandlerFunc(h.getBudget).ServeHTTP, Public: true},
		{Method: http.MethodPut, Path: PathBudget, Handler: httpapi.HandlerFunc(h.putBudget).ServeHTTP, Public: true},
	}
}

func (h *Handlers) get(w http.ResponseWriter, r *http.Request) error {
	id, err := h.o.Users.Caller(r, msgOthersUsage)
	if err != nil {
		return err
	}
	qs := r.URL.Query()
	q, err := usage.ParseQuery(id.UserID, qs.Get("from"), qs.Get("to"), qs.Get("group_by"), h.o.Now())
	if qe, ok := errors.AsType[*usage.QueryError](err); ok {
		return httpapi.Errorf(http.StatusBadRequest, "Bad usage query: %s", qe.Message)
	}
	if err != nil {
		return err
	}
	rep, err := usage.Ask(r.Context(), h.ledger, q)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
	return nil
}
