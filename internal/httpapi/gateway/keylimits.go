package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/llm"
	"agentchat/internal/store"
)

// An API key's max_parallel (store.KeyLimits) makes each of its runs take
// one of the key's own turn slots (keySlots; store-backed like the user's),
// instead of one of the user's: MAX_TURNS_PER_USER does not apply to the
// key's runs. Beyond it, a run is refused with 429 rate_limit_error
// (code too_many_concurrent_requests, TooManyKeyTurnsMessage) and
// Retry-After, with the rate-limit headers below when the key has them.
//
// The rate limits of an API key (its rpm and tpm, store.KeyLimits) are
// counted per fixed minute (UTC), in store counters shared by every
// instance (Options.Rates):
//
//   - a run request (POST /v1/chat/completions, /v1/chat, /v1/chat/sync)
//     counts one request first, refused or not (as OpenAI counts failed
//     requests); the request beyond rpm is refused;
//   - then the minute's tokens are checked: once they reached tpm, the
//     request is refused;
//   - a run adds the tokens it used (prompt and completion, every LLM call)
//     to the minute in which it ends.
//
// A refusal is a 429 rate_limit_error (code rate_limit_exceeded) with
// Retry-After, the seconds left in the minute. Every run response of a key
// with rpm carries x-ratelimit-limit-requests, -remaining-requests and
// -reset-requests, and of a key with tpm the -tokens trio, as OpenAI sends
// them (the reset as a duration, "12s").

// Rate-limit response headers (OpenAI's names).
const (
	HeaderLimitRequests     = "X-Ratelimit-Limit-Requests"
	HeaderRemainingRequests = "X-Ratelimit-Remaining-Requests"
	HeaderResetRequests     = "X-Ratelimit-Reset-Requests"
	HeaderLimitTokens       = "X-Ratelimit-Limit-Tokens"
	HeaderRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	HeaderResetTokens       = "X-Ratelimit-Reset-Tokens"
)

const (
	// rateWindow is the window of rpm and tpm.
	rateWindow = time.Minute
	// rateTTL is how long a window's counter is kept (the store drops it
	// afterwards).
	rateTTL = 2 * rateWindow
	// spendTimeout bounds the addition of a run's tokens, made after the
	// run even when its client went away.
	spendTimeout = 5 * time.Second
	// codeRateLimited is the code of a refusal by rpm or tpm (OpenAI's).
	codeRateLimited = "rate_limit_exceeded"
)

// Counter names of a key: one per key and limit, the window apart.
func requestsCounter(keyID string) string { return "apikey-rpm#" + keyID }
func tokensCounter(keyID string) string   { return "apikey-tpm#" + keyID }

// admit counts a run request against the rpm of the caller's API key and
// checks the minute's tokens against its tpm, setting the rate-limit
// headers. It answers a refusal (or a failure of the counters) itself and
// then returns false. A caller without a key, a key without rpm nor tpm,
// or a gateway without Options.Rates passes at no cost.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request) bool {
	id, _ := auth.FromContext(r.Context())
	lim := id.KeyLimits
	if id.KeyID == "" || g.o.Rates == nil || (lim.RPM <= 0 && lim.TPM <= 0) {
		return true
	}
	ctx := r.Context()
	now := g.o.Now()
	window := now.Truncate(rateWindow)
	reset := window.Add(rateWindow).Sub(now)
	h := w.Header()
	var refused *openaierr.Error
	if lim.RPM > 0 {
		n, ok, err := g.o.Rates.AddRate(ctx, requestsCounter(id.KeyID), window, 1, int64(lim.RPM), rateTTL)
		if err != nil {
			g.fail(w, r, fmt.Errorf("count a request of api key %s: %w", id.KeyID, err))
			return false
		}
		setRateHeaders(h, HeaderLimitRequests, HeaderRemainingRequests, HeaderResetRequests, lim.RPM, n, reset)
		if !ok {
			refused = rateLimited("requests per min (RPM)", lim.RPM, n, reset)
		}
	}
	if lim.TPM > 0 {
		// Adding nothing under the limit: a check that the minute's
		// tokens are below it.
		n, ok, err := g.o.Rates.AddRate(ctx, tokensCounter(id.KeyID), window, 0, int64(lim.TPM), rateTTL)
		if err != nil {
			g.fail(w, r, fmt.Errorf("read the tokens of api key %s: %w", id.KeyID, err))
			return false
		}
		setRateHeaders(h, HeaderLimitTokens, HeaderRemainingTokens, HeaderResetTokens, lim.TPM, n, reset)
		if !ok && refused == nil {
			refused = rateLimited("tokens per min (TPM)", lim.TPM, n, reset)
		}
	}
	if refused != nil {
		openaierr.Write(w, refused)
		return false
	}
	return true
}

// setRateHeaders sets one trio of rate-limit headers: the limit, what is
// left of it (never negative) and the time until the window resets.
func setRateHeaders(h http.Header, limitName, remainingName, resetName string, limit int, used int64, reset time.Duration) {
	h.Set(limitName, strconv.Itoa(limit))
	h.Set(remainingName, strconv.FormatInt(max(int64(limit)-used, 0), 10))
	h.Set(resetName, resetText(reset))
}

// resetText is a reset delay as OpenAI writes it ("12s", "1m0s"): whole
// seconds, rounded up, at least one.
func resetText(d time.Duration) string {
	return (max(d, time.Second) + time.Second - 1).Truncate(time.Second).String()
}

// rateLimited is the refusal of a request by rpm or tpm.
func rateLimited(what string, limit int, used int64, reset time.Duration) *openaierr.Error {
	return &openaierr.Error{
		Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: codeRateLimited, RetryAfter: max(reset, time.Second),
		Message: fmt.Sprintf("Rate limit reached for this API key on %s: Limit %d, Used %d. Please try again in %s.",
			what, limit, used, resetText(reset)),
	}
}

// keySlots makes a run of an API key with its own max_parallel take one
// of the key's turn slots, on every instance, instead of one of the
// user's (MAX_TURNS_PER_USER does not apply to it).
func keySlots(r *http.Request, req *agent.StatelessRequest) {
	id, _ := auth.FromContext(r.Context())
	req.KeyID, req.KeyBudget = id.KeyID, id.KeyLimits.Budget
	if id.KeyID != "" && id.KeyLimits.MaxParallel > 0 {
		req.SlotPool, req.MaxTurns = agent.KeySlotPool(id.KeyID), id.KeyLimits.MaxParallel
	}
}

// TooManyKeyTurnsMessage is the message of the 429 answered to a key
// that already runs its max_parallel n turns at once.
func TooManyKeyTurnsMessage(n int) string {
	return fmt.Sprintf("Too many responses are being generated with this API key at once (its max_parallel is %d). Wait for one to finish, then try again.", n)
}

// keyTurnsMessage words the refusal ae of a run refused for its turn
// slots (err) after the key's max_parallel when the key has one.
func keyTurnsMessage(r *http.Request, err error, ae *openaierr.Error) {
	var full *store.TurnSlotsFullError
	id, _ := auth.FromContext(r.Context())
	if id.KeyID != "" && id.KeyLimits.MaxParallel > 0 && errors.As(err, &full) {
		ae.Message = TooManyKeyTurnsMessage(full.Slots)
	}
}

// runStateless runs req (agent.Runtime.RunStateless) and adds the tokens
// the run used to the minute of the caller's API key when it has a tpm.
func (g *Gateway) runStateless(ctx context.Context, r *http.Request, req agent.StatelessRequest, emit func(agent.Event)) (*agent.StatelessResult, error) {
	res, err := g.o.Runtime.RunStateless(ctx, req, emit)
	if res != nil {
		g.spend(r, res.Usage)
	}
	return res, err
}

// spend adds the tokens of u to the current minute of the caller's key
// (with a tpm), without limit: the run is over. A failure is logged.
func (g *Gateway) spend(r *http.Request, u llm.Usage) {
	id, _ := auth.FromContext(r.Context())
	if id.KeyID == "" || g.o.Rates == nil || id.KeyLimits.TPM <= 0 {
		return
	}
	n := openaiwire.UsageOf(u).TotalTokens
	if n <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), spendTimeout)
	defer cancel()
	if _, _, err := g.o.Rates.AddRate(ctx, tokensCounter(id.KeyID), g.o.Now().Truncate(rateWindow), int64(n), 0, rateTTL); err != nil {
		g.logger(r).WarnContext(ctx, "tokens of api key not counted", "key_id", id.KeyID, "tokens", n, "err", err)
	}
}
