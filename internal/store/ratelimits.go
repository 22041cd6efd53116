package store

import (
	"context"
	"time"
)

// KeyLimits are an API key's own limits; 0 means none.
type KeyLimits struct {
	// MaxParallel is how many turns the key runs at once; set, it
	// replaces the per-user cap (MAX_TURNS_PER_USER) for the key's runs.
	MaxParallel int
	// RPM is how many requests the key makes per minute.
	RPM int
	// TPM is how many tokens the key's requests use per minute.
	TPM int
	// Budget bounds what the key's LLM calls cost (zero: none).
	Budget Budget
}

// APIKeyLimits changes the limits of API keys.
type APIKeyLimits interface {
	// SetAPIKeyLimits replaces the limits of the user's key (revoked or
	// not); ErrNotFound when the user has no such key. APIKeyByHash
	// returns them from then on.
	SetAPIKeyLimits(ctx context.Context, userID, keyID string, l KeyLimits) error
}

// RateCounters are counters per name and fixed window (a minute for rpm
// and tpm), shared by every instance.
type RateCounters interface {
	// AddRate adds n to the counter of name in the window that starts at
	// window, when limit <= 0 or the counter's value before is below
	// limit. It returns the value after (the value as it stands when
	// refused) and whether n was added. The counter is kept at least ttl
	// after window (then dropped: DynamoDB's TTL, a delete on SQLite).
	AddRate(ctx context.Context, name string, window time.Time, n, limit int64, ttl time.Duration) (int64, bool, error)
}
