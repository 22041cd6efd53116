package apikeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/budgetreq"
	"agentchat/internal/pricing"
	"agentchat/internal/store"
)

// Upper bounds of a key's limits.
const (
	MaxMaxParallel = 1000
	MaxRPM         = 1_000_000
	MaxTPM         = 1_000_000_000
)

// Limits are a key's own limits as answered: null when none.
type Limits struct {
	MaxParallel *int `json:"max_parallel"`
	RPM         *int `json:"rpm"`
	TPM         *int `json:"tpm"`
	// MaxBudgetUSD bounds what the key's LLM calls cost over
	// BudgetPeriod ("day", "month", or null: ever).
	MaxBudgetUSD *float64 `json:"max_budget_usd"`
	BudgetPeriod *string  `json:"budget_period"`
}

func limitsOf(l store.KeyLimits) Limits {
	opt := func(n int) *int {
		if n <= 0 {
			return nil
		}
		return &n
	}
	out := Limits{MaxParallel: opt(l.MaxParallel), RPM: opt(l.RPM), TPM: opt(l.TPM)}
	if l.Budget.Set() {
		usd := pricing.USD(l.Budget.MaxNanos)
		out.MaxBudgetUSD = &usd
		if p := l.Budget.Period; p != store.BudgetTotal {
			out.BudgetPeriod = &p
		}
	}
	return out
}

// LimitsRequest sets a key's limits, at creation or with PATCH: each
// field absent keeps the limit (none at creation), null or 0 removes it,
// a whole number sets it (max_parallel 1..1000, rpm 1..1000000, tpm
// 1..1000000000).
type LimitsRequest struct {
	MaxParallel json.RawMessage `json:"max_parallel"`
	RPM         json.RawMessage `json:"rpm"`
	TPM         json.RawMessage `json:"tpm"`
	// MaxBudgetUSD and BudgetPeriod set the key's budget (budgetreq.Parse).
	MaxBudgetUSD json.RawMessage `json:"max_budget_usd"`
	BudgetPeriod json.RawMessage `json:"budget_period"`
}

// apply returns cur changed by the fields of req that are present.
func (req *LimitsRequest) apply(cur store.KeyLimits) (store.KeyLimits, error) {
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		max  int
		dst  *int
	}{
		{"max_parallel", req.MaxParallel, MaxMaxParallel, &cur.MaxParallel},
		{"rpm", req.RPM, MaxRPM, &cur.RPM},
		{"tpm", req.TPM, MaxTPM, &cur.TPM},
	} {
		raw := bytes.TrimSpace(f.raw)
		if len(raw) == 0 {
			continue
		}
		if string(raw) == "null" {
			*f.dst = 0
			continue
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n < 0 || n > int64(f.max) {
			return cur, httpapi.Errorf(http.StatusUnprocessableEntity, "Field '%s' must be a whole number between 0 (no limit) and %d, or null", f.name, f.max)
		}
		*f.dst = int(n)
	}
	b, err := budgetreq.Parse(req.MaxBudgetUSD, req.BudgetPeriod, cur.Budget)
	if err != nil {
		return cur, err
	}
	cur.Budget = b
	return cur, nil
}

// setLimits serves PATCH .../api-keys/{key_id}: the body is a
// LimitsRequest; the answer is the key with its new limits. A caller
// authenticated by an API key may not raise limits (403), so that a
// leaked key cannot lift its own bounds.
func (h *Handlers) setLimits(w http.ResponseWriter, r *http.Request) error {
	id, err := h.owner(r)
	if err != nil {
		return err
	}
	lim, ok := h.keys.(store.APIKeyLimits)
	if !ok {
		return httpapi.Errorf(http.StatusNotImplemented, "This store cannot change API key limits")
	}
	keyID := r.PathValue("key_id")
	if err := httpapi.ValidateUUID("key_id", keyID); err != nil {
		return err
	}
	keyID = httpapi.NormalizeUUID(keyID)
	var body LimitsRequest
	if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{DisallowUnknownFields: true, MaxBytes: 4 << 10}); err != nil {
		return err
	}
	keys, err := h.keys.ListAPIKeys(r.Context(), id.UserID)
	if err != nil {
		return fmt.Errorf("list api keys: %w", err)
	}
	var k *store.APIKey
	for i := range keys {
		if keys[i].ID == keyID {
			k = &keys[i]
		}
	}
	if k == nil {
		return httpapi.Errorf(http.StatusNotFound, "API key '%s' not found", keyID)
	}
	next, err := body.apply(k.Limits)
	if err != nil {
		return err
	}
	if id.Via == auth.ViaAPIKey && raises(k.Limits, next) {
		return httpapi.Errorf(http.StatusForbidden, "API keys cannot raise or remove key limits: sign in with your login token")
	}
	if err := lim.SetAPIKeyLimits(r.Context(), id.UserID, keyID, next); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return httpapi.Errorf(http.StatusNotFound, "API key '%s' not found", keyID)
		}
		return fmt.Errorf("set api key limits: %w", err)
	}
	k.Limits = next
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "api key limits changed", "key_id", keyID,
		"max_parallel", next.MaxParallel, "rpm", next.RPM, "tpm", next.TPM, "budget_nanos", next.Budget.MaxNanos, "budget_period", next.Budget.Period)
	httpapi.WriteJSON(w, http.StatusOK, keyOf(k, h.o.Now()))
	return nil
}

// raises reports whether next lifts any bound of cur (0 is no bound).
func raises(cur, next store.KeyLimits) bool {
	up := func(a, b int) bool { return a > 0 && (b == 0 || b > a) }
	return up(cur.MaxParallel, next.MaxParallel) || up(cur.RPM, next.RPM) || up(cur.TPM, next.TPM) || budgetRaised(cur.Budget, next.Budget)
}

// budgetRaised reports whether next lets a key spend more than cur: a
// budget removed or raised, or a period that counts less (a total counts
// everything, a month more than a day).
func budgetRaised(cur, next store.Budget) bool {
	if !cur.Set() {
		return false
	}
	rank := map[string]int{store.BudgetDay: 0, store.BudgetMonth: 1, store.BudgetTotal: 2}
	return !next.Set() || next.MaxNanos > cur.MaxNanos || rank[next.Period] < rank[cur.Period]
}
