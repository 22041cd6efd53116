package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrLimitReached means the owner already holds as many items of a kind as
// the store's Limits allow; errors.As with *LimitError tells which limit.
var ErrLimitReached = errors.New("limit reached")

// Resource names a kind of item that Limits cap.
type Resource string

// Capped resources.
const (
	ResourceSessions   Resource = "chat sessions"
	ResourceLLMConfigs Resource = "LLM model configurations"
	ResourceAPIKeys    Resource = "active API keys"
)

// Limits cap what one owner may hold; a zero or negative field is no cap.
// A store enforces them when it creates an item, in the same atomic step
// under concurrency (see each implementation for how it counts): a
// creation that would pass a limit fails with a *LimitError and writes
// nothing.
type Limits struct {
	// SessionsPerUser caps a user's chat sessions, over every project
	// (MAX_SESSIONS_PER_USER).
	SessionsPerUser int
	// LLMConfigsPerOwner caps the LLM configurations of a user, and those
	// of a group (MAX_LLM_CONFIGS_PER_USER).
	LLMConfigsPerOwner int
	// APIKeysPerUser caps a user's active API keys: neither revoked nor
	// expired (MAX_API_KEYS_PER_USER).
	APIKeysPerUser int
}

// LimitError is a creation refused by a limit; errors.Is(err,
// ErrLimitReached) holds.
type LimitError struct {
	Resource Resource
	Limit    int
}

// Error names the resource and the limit.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: at most %d %s", ErrLimitReached, e.Limit, e.Resource)
}

// Is makes a *LimitError match ErrLimitReached.
func (e *LimitError) Is(target error) bool { return target == ErrLimitReached }

// LimitMessage is the message a client sees for err: the limit, and how to
// free room.
func (e *LimitError) LimitMessage() string {
	switch e.Resource {
	case ResourceSessions:
		return fmt.Sprintf("Limit reached: you have %d chat sessions, the most allowed. Delete a session you no longer need, then try again.", e.Limit)
	case ResourceLLMConfigs:
		return fmt.Sprintf("Limit reached: at most %d LLM model configurations are allowed. Delete one you no longer need, then try again.", e.Limit)
	case ResourceAPIKeys:
		return fmt.Sprintf("Limit reached: you have %d active API keys, the most allowed. Revoke one you no longer need, then try again.", e.Limit)
	}
	return fmt.Sprintf("Limit reached: at most %d %s.", e.Limit, e.Resource)
}

// SessionRoom is a Store that tells, with one read, whether a user may
// create one more session under Limits.SessionsPerUser. It is a check
// ahead of a creation, which stays the atomic gate: a turn whose session
// is created beside its first LLM call is refused with it before it
// streams.
type SessionRoom interface {
	// CheckSessionRoom returns a *LimitError when the user already holds
	// Limits.SessionsPerUser sessions (as the store counts them); nil when
	// there is room or no limit.
	CheckSessionRoom(ctx context.Context, userID string) error
}
