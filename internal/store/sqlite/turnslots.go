package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"agentchat/internal/store"
)

// The turn slot statements are not among the prepared hot statements: a
// slot is taken and released once per turn and renewed every few seconds,
// and Open must keep working on a schema older than the turn_slots table
// (the migration tests open one).
const (
	// turnSlotsSQL reads the user's slots below the count asked for.
	turnSlotsSQL = `SELECT slot, owner, expires_at FROM turn_slots WHERE user_id = ? AND slot < ?`
	// takeTurnSlotSQL writes the slot chosen inside the same transaction.
	takeTurnSlotSQL = `INSERT INTO turn_slots (user_id, slot, owner, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (user_id, slot) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at`
	renewTurnSlotSQL   = `UPDATE turn_slots SET expires_at = ? WHERE user_id = ? AND slot = ? AND owner = ?`
	releaseTurnSlotSQL = `DELETE FROM turn_slots WHERE user_id = ? AND slot = ? AND owner = ?`
)

// slotRow is a stored slot: its holder and expiry (stored text).
type slotRow struct {
	owner, expires string
}

// AcquireTurnSlot implements store.TurnSlots in one write transaction:
// it reads the user's slots, picks the first free one (absent, expired or
// owner's) from store.FirstTurnSlot on, and writes it. The writer
// serializes the handles of this process and BEGIN IMMEDIATE those of
// other processes, so two turns never pick the same slot.
func (s *Store) AcquireTurnSlot(ctx context.Context, userID, owner string, n int, ttl time.Duration) (int, error) {
	if err := store.CheckTurnSlotArgs(userID, owner, n, ttl); err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	t, until, err := s.leaseUntil(ttl)
	if err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	now, err := encTime(t)
	if err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	first := store.FirstTurnSlot(owner, n)
	slot := -1
	err = s.write(ctx, func(tx *sql.Tx) error {
		held, err := readTurnSlots(ctx, tx, userID, n)
		if err != nil {
			return err
		}
		earliest := ""
		for j := range n {
			i := (first + j) % n
			h, ok := held[i]
			if !ok || h.owner == owner || h.expires <= now {
				slot = i
				break
			}
			if earliest == "" || h.expires < earliest {
				earliest = h.expires
			}
		}
		if slot < 0 {
			at, err := decTime(earliest)
			if err != nil {
				return err
			}
			return &store.TurnSlotsFullError{Slots: n, Until: at}
		}
		_, err = tx.ExecContext(ctx, takeTurnSlotSQL, userID, slot, owner, until)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	return slot, nil
}

// readTurnSlots reads the user's slots below n, by slot number.
func readTurnSlots(ctx context.Context, tx *sql.Tx, userID string, n int) (map[int]slotRow, error) {
	rows, err := tx.QueryContext(ctx, turnSlotsSQL, userID, n)
	if err != nil {
		return nil, fmt.Errorf("read turn slots: %w", err)
	}
	defer func() { _ = rows.Close() }()
	held := map[int]slotRow{}
	for rows.Next() {
		var (
			i int
			r slotRow
		)
		if err := rows.Scan(&i, &r.owner, &r.expires); err != nil {
			return nil, fmt.Errorf("read turn slots: %w", err)
		}
		held[i] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read turn slots: %w", err)
	}
	return held, nil
}

// RenewTurnSlot implements store.TurnSlots: it moves the expiry of the
// owner's slot; store.ErrLeaseLost when owner no longer holds it.
func (s *Store) RenewTurnSlot(ctx context.Context, userID string, slot int, owner string, ttl time.Duration) error {
	if err := store.CheckTurnSlotArgs(userID, owner, slot+1, ttl); err != nil {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, err)
	}
	_, until, err := s.leaseUntil(ttl)
	if err != nil {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, renewTurnSlotSQL, until, userID, slot, owner)
		return oneRow(res, err, store.ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, err)
	}
	return nil
}

// ReleaseTurnSlot implements store.TurnSlots: it deletes the slot's row
// if owner holds it, and is a no-op otherwise.
func (s *Store) ReleaseTurnSlot(ctx context.Context, userID string, slot int, owner string) error {
	if userID == "" || owner == "" || slot < 0 {
		return nil // such a slot cannot be held
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, releaseTurnSlotSQL, userID, slot, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("release turn slot %d of user %s: %w", slot, userID, err)
	}
	return nil
}
