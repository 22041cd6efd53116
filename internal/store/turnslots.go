package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTurnSlotsFull means the user already runs as many turns as allowed
// (TurnSlots): every one of the user's turn slots is held by another turn.
var ErrTurnSlotsFull = errors.New("too many turns running for this user")

// LeaseHeldError is the error AcquireLease returns when another turn holds
// the session's lease; errors.Is(err, ErrLeaseHeld) holds. Until is when the
// lease can be taken at the latest if its holder neither renews nor
// releases it: the lease's expiry, or the end of the AbortGrace of a
// pending abort request when that comes first.
type LeaseHeldError struct {
	Until time.Time
	// Owner is the holder of the lease (the running turn's id), when the
	// store tells it.
	Owner string
}

// Error says that the lease is held, and until when.
func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%s (lease held until %s)", ErrLeaseHeld, e.Until.UTC().Format(time.RFC3339Nano))
}

// Is makes a LeaseHeldError match ErrLeaseHeld.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// RetryAfter is how long to wait, from now, before the lease can be taken:
// Until - now, at least one second.
func (e *LeaseHeldError) RetryAfter(now time.Time) time.Duration {
	return retryAfter(e.Until, now)
}

// TurnSlotsFullError is the error AcquireTurnSlot returns when every slot
// of the user is held by another owner; errors.Is(err, ErrTurnSlotsFull)
// holds. Slots is the number of slots asked for (the cap); Until is the
// earliest expiry among the held slots, when one may be free at the latest.
type TurnSlotsFullError struct {
	Slots int
	Until time.Time
}

// Error says how many slots are held, and until when the first one is.
func (e *TurnSlotsFullError) Error() string {
	return fmt.Sprintf("%s (all %d slots held, the first until %s)", ErrTurnSlotsFull, e.Slots, e.Until.UTC().Format(time.RFC3339Nano))
}

// Is makes a TurnSlotsFullError match ErrTurnSlotsFull.
func (e *TurnSlotsFullError) Is(target error) bool { return target == ErrTurnSlotsFull }

// RetryAfter is how long to wait, from now, before a slot may be free:
// Until - now, at least one second.
func (e *TurnSlotsFullError) RetryAfter(now time.Time) time.Duration {
	return retryAfter(e.Until, now)
}

// retryAfter is until - now, at least one second.
func retryAfter(until, now time.Time) time.Duration {
	return max(until.Sub(now), time.Second)
}

// TurnSlots cap the turns that one user runs at once, counted over every
// instance that shares the store (DynamoDB keeps the count in the table, so
// that it also holds on AWS Lambda, where each instance serves one request;
// SQLite, the store of one process, keeps it in memory). A user has numbered
// slots 0, 1, ...; each is a small lease held by an owner (an opaque
// non-empty string chosen by the caller, unique per turn) until its
// expiry. An absent or expired slot is free. A turn takes a slot before it
// runs, renews it while it runs, and releases it when it ends; a crashed
// turn's slot frees itself when it expires.
type TurnSlots interface {
	// AcquireTurnSlot takes one of the user's slots 0..n-1 for owner until
	// now+ttl and returns its number. It succeeds when one of them is free;
	// a slot already owner's counts as free for owner (it is renewed), so
	// that an acquisition repeated after a lost answer succeeds. An owner
	// is meant to acquire once per turn. The slot tried first is
	// FirstTurnSlot(owner, n), so that concurrent turns of one user rarely
	// contend for the same slot; the others are tried only when it is
	// taken. When all
	// n slots are held by other owners it returns a *TurnSlotsFullError
	// (errors.Is(err, ErrTurnSlotsFull)) and changes nothing. Of any set of
	// concurrent acquisitions, at most as many succeed as there were free
	// slots. An empty userID or owner, an n below 1 or a ttl that is not
	// positive is an error (not ErrTurnSlotsFull) and changes nothing.
	AcquireTurnSlot(ctx context.Context, userID, owner string, n int, ttl time.Duration) (slot int, err error)
	// RenewTurnSlot extends owner's slot to now+ttl. A slot that expired
	// but that nobody took is still owner's and is renewed; ErrLeaseLost
	// when owner no longer holds it (released, or taken by another owner
	// after it expired).
	RenewTurnSlot(ctx context.Context, userID string, slot int, owner string, ttl time.Duration) error
	// ReleaseTurnSlot frees owner's slot (expired or not). Releasing a slot
	// that owner does not hold, or that does not exist, is a no-op and
	// returns nil.
	ReleaseTurnSlot(ctx context.Context, userID string, slot int, owner string) error
}

// InMemoryTurnSlots is implemented by a store that counts its TurnSlots in
// the memory of this process (SQLite): taking, renewing and releasing a
// slot costs no I/O, so a caller takes one inline rather than overlapping
// it with other store calls on another goroutine, whose start and hand-off
// would cost more than the call itself.
type InMemoryTurnSlots interface {
	TurnSlots
	// TurnSlotsInMemory does nothing; it marks the implementation.
	TurnSlotsInMemory()
}

// FirstTurnSlot is the slot that AcquireTurnSlot tries first for owner
// among n slots (n >= 1): an FNV-1a hash of owner, modulo n. Every
// implementation uses it, so that the spread is the same on every store.
func FirstTurnSlot(owner string, n int) int {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(owner); i++ {
		h ^= uint64(owner[i])
		h *= prime
	}
	return int(h % uint64(n))
}

// CheckTurnSlotArgs rejects the arguments of AcquireTurnSlot that name no
// user, no holder, no slot or no duration.
func CheckTurnSlotArgs(userID, owner string, n int, ttl time.Duration) error {
	switch {
	case userID == "":
		return errors.New("empty user id")
	case owner == "":
		return errors.New("empty owner")
	case n < 1:
		return fmt.Errorf("slot count %d is below 1", n)
	case ttl <= 0:
		return fmt.Errorf("slot ttl %v is not positive", ttl)
	}
	return nil
}
