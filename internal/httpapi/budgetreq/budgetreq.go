// Package budgetreq reads the budget fields a request gives
// (max_budget_usd and budget_period), shared by an API key's limits
// (package apikeys) and a user's budget (package usageapi).
package budgetreq

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	"agentchat/internal/httpapi"
	"agentchat/internal/pricing"
	"agentchat/internal/store"
)

// MaxUSD bounds a budget (USD).
const MaxUSD = 1_000_000

// Parse reads max_budget_usd and budget_period as a client sends
// them (raw JSON; absent: keep cur, null or 0: no budget): a number of
// dollars from 0 to MaxUSD (at most nano-dollar precision) and
// "day", "month" or null (ever). A refusal is a 422 naming the field.
func Parse(maxRaw, periodRaw json.RawMessage, cur store.Budget) (store.Budget, error) {
	maxRaw, periodRaw = bytes.TrimSpace(maxRaw), bytes.TrimSpace(periodRaw)
	if len(maxRaw) > 0 {
		if string(maxRaw) == "null" {
			cur = store.Budget{}
		} else {
			usd, err := strconv.ParseFloat(string(maxRaw), 64)
			if err != nil || usd < 0 || usd > MaxUSD || maxRaw[0] == '"' {
				return cur, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'max_budget_usd' must be a number of dollars between 0 (no budget) and %d, or null", MaxUSD)
			}
			cur.MaxNanos = int64(math.Round(usd * pricing.NanosPerUSD))
		}
	}
	if len(periodRaw) > 0 {
		var p *string
		if err := json.Unmarshal(periodRaw, &p); err != nil || (p != nil && (*p == "" || !store.ValidBudgetPeriod(*p))) {
			return cur, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'budget_period' must be \"day\", \"month\" or null (no period: every day counts)")
		}
		cur.Period = ""
		if p != nil {
			cur.Period = *p
		}
	}
	if !cur.Set() {
		cur = store.Budget{}
	}
	return cur, nil
}
