package usageapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"agentchat/internal/budget"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/budgetreq"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/pricing"
	"agentchat/internal/store"
)

// PathBudget is the route of a user's budget:
//
//	GET /v3/access/users/{user_id}/budget  (the admin token, or the user) → 200 BudgetView
//	PUT /v3/access/users/{user_id}/budget  (the admin token only)         → 200 BudgetView
//
// The PUT body is {"max_budget_usd": 20, "budget_period": "month"}
// (max_budget_usd null or 0 removes the budget; budget_period "day",
// "month" or null: every day counts). With the admin token, {user_id}
// is the user's id (the sub of their tokens), never "me".
const PathBudget = "/v3/access/users/{user_id}/budget"

// msgOthersBudget refuses another user's budget.
const msgOthersBudget = "You can only see your own budget"

// BudgetView is a user's budget and what its period spent so far.
type BudgetView struct {
	UserID string `json:"user_id"`
	// MaxBudgetUSD is null when the user has no budget.
	MaxBudgetUSD *float64 `json:"max_budget_usd"`
	BudgetPeriod *string  `json:"budget_period"`
	// From and To are the days the period counts (UTC); SpentUSD what the
	// user's priced LLM calls cost in them; LeftUSD what is left (null
	// without a budget).
	From     string   `json:"from"`
	To       string   `json:"to"`
	SpentUSD float64  `json:"spent_usd"`
	LeftUSD  *float64 `json:"left_usd"`
}

// budgetRequest is the body of PUT .../budget.
type budgetRequest struct {
	MaxBudgetUSD json.RawMessage `json:"max_budget_usd"`
	BudgetPeriod json.RawMessage `json:"budget_period"`
}

// budgetUser authenticates a budget request (a Public route): the admin
// token may name any user by id; anyone else only themselves, and only
// to read.
func (h *Handlers) budgetUser(r *http.Request, write bool) (string, error) {
	admin, id, err := httpapi.AdminOrCaller(r, h.o.AdminToken, h.o.Auth)
	if err != nil {
		return "", err
	}
	path := r.PathValue("user_id")
	if admin {
		if path == userpath.Me || path == "" {
			return "", httpapi.Errorf(http.StatusBadRequest, "With the admin token, name the user by id, not %q", path)
		}
		return path, nil
	}
	if write {
		return "", httpapi.Errorf(http.StatusForbidden, "Only an administrator (ADMIN_TOKEN) sets budgets")
	}
	if err := h.o.Users.Check(r.Context(), id, path, msgOthersBudget); err != nil {
		return "", err
	}
	return id.UserID, nil
}

func (h *Handlers) getBudget(w http.ResponseWriter, r *http.Request) error {
	user, err := h.budgetUser(r, false)
	if err != nil {
		return err
	}
	b, err := h.budgets.UserBudget(r.Context(), user)
	if err != nil {
		return err
	}
	return h.writeBudget(w, r, user, b)
}

func (h *Handlers) putBudget(w http.ResponseWriter, r *http.Request) error {
	user, err := h.budgetUser(r, true)
	if err != nil {
		return err
	}
	var body budgetRequest
	if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{DisallowUnknownFields: true, MaxBytes: 4 << 10}); err != nil {
		return err
	}
	if len(body.MaxBudgetUSD) == 0 {
		return httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'max_budget_usd' is required (null removes the budget)")
	}
	b, err := budgetreq.Parse(body.MaxBudgetUSD, body.BudgetPeriod, store.Budget{})
	if err != nil {
		return err
	}
	if err := h.budgets.SetUserBudget(r.Context(), user, b); err != nil {
		return fmt.Errorf("set budget: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "user budget set", "user_id", user, "budget_nanos", b.MaxNanos, "budget_period", b.Period)
	return h.writeBudget(w, r, user, b)
}

// writeBudget answers the BudgetView of user's budget b.
func (h *Handlers) writeBudget(w http.ResponseWriter, r *http.Request, user string, b store.Budget) error {
	from, to, spent, err := budget.Spent(r.Context(), h.ledger, user, b.Period, h.o.Now())
	if err != nil {
		return err
	}
	v := BudgetView{UserID: user, From: from, To: to, SpentUSD: pricing.USD(spent)}
	if b.Set() {
		maxUSD, left := pricing.USD(b.MaxNanos), pricing.USD(max(b.MaxNanos-spent, 0))
		v.MaxBudgetUSD, v.LeftUSD = &maxUSD, &left
		if b.Period != store.BudgetTotal {
			p := b.Period
			v.BudgetPeriod = &p
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}
