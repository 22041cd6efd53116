package sqlite

import (
	"context"
	"fmt"
	"sync"
	"time"

	"agentchat/internal/store"
)

// turnSlots are the turn slots of the users (store.TurnSlots), kept in the
// Store's memory rather than in the file: a SQLite store is the store of
// one process (the local server), and a slot is taken and released on
// every turn and /v1 request, where two write transactions cost a quarter
// of a streamed request's CPU (make bench-e2e's profile). The cap is
// therefore counted per process: two processes sharing one file count
// their turns apart (the README says so).
type turnSlots struct {
	mu sync.Mutex
	// held maps a user to the slots in use, by slot number.
	held map[string]map[int]slotHolder
}

// slotHolder is a slot in use: its holder and its expiry.
type slotHolder struct {
	owner string
	until time.Time
}

// TurnSlotsInMemory implements store.InMemoryTurnSlots.
func (s *Store) TurnSlotsInMemory() {}

var _ store.InMemoryTurnSlots = (*Store)(nil)

// AcquireTurnSlot implements store.TurnSlots: the first free slot (absent,
// expired or owner's) from store.FirstTurnSlot on is given to owner until
// now+ttl; a *store.TurnSlotsFullError with the earliest expiry when all n
// are held by others.
func (s *Store) AcquireTurnSlot(_ context.Context, userID, owner string, n int, ttl time.Duration) (int, error) {
	if err := store.CheckTurnSlotArgs(userID, owner, n, ttl); err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	now := s.now()
	ts := &s.slots
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.held == nil {
		ts.held = map[string]map[int]slotHolder{}
	}
	held := ts.held[userID]
	if held == nil {
		held = map[int]slotHolder{}
		ts.held[userID] = held
	}
	first := store.FirstTurnSlot(owner, n)
	var earliest time.Time
	for j := range n {
		i := (first + j) % n
		h, ok := held[i]
		if !ok || h.owner == owner || !now.Before(h.until) {
			held[i] = slotHolder{owner: owner, until: now.Add(ttl)}
			return i, nil
		}
		if earliest.IsZero() || h.until.Before(earliest) {
			earliest = h.until
		}
	}
	return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, &store.TurnSlotsFullError{Slots: n, Until: earliest})
}

// RenewTurnSlot implements store.TurnSlots: it moves the expiry of the
// owner's slot; store.ErrLeaseLost when owner no longer holds it.
func (s *Store) RenewTurnSlot(_ context.Context, userID string, slot int, owner string, ttl time.Duration) error {
	if err := store.CheckTurnSlotArgs(userID, owner, slot+1, ttl); err != nil {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, err)
	}
	ts := &s.slots
	ts.mu.Lock()
	defer ts.mu.Unlock()
	h, ok := ts.held[userID][slot]
	if !ok || h.owner != owner {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, store.ErrLeaseLost)
	}
	ts.held[userID][slot] = slotHolder{owner: owner, until: s.now().Add(ttl)}
	return nil
}

// ReleaseTurnSlot implements store.TurnSlots: it frees the slot if owner
// holds it, and is a no-op otherwise.
func (s *Store) ReleaseTurnSlot(_ context.Context, userID string, slot int, owner string) error {
	ts := &s.slots
	ts.mu.Lock()
	defer ts.mu.Unlock()
	held := ts.held[userID]
	if h, ok := held[slot]; ok && h.owner == owner {
		delete(held, slot)
		if len(held) == 0 {
			delete(ts.held, userID)
		}
	}
	return nil
}
