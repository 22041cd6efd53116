package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"agentchat/internal/store"
)

// SetUserBudget implements store.UserBudgets.
func (s *Store) SetUserBudget(ctx context.Context, userID string, b store.Budget) error {
	defer s.budgets.invalidate()
	err := s.write(ctx, func(tx *sql.Tx) error {
		if !b.Set() {
			_, err := tx.ExecContext(ctx, `DELETE FROM user_budgets WHERE user_id = ?`, userID)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO user_budgets (user_id, budget_nanos, budget_period) VALUES (?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET budget_nanos = excluded.budget_nanos, budget_period = excluded.budget_period`,
			userID, b.MaxNanos, b.Period)
		return err
	})
	if err != nil {
		return fmt.Errorf("set budget of user %s: %w", userID, err)
	}
	return nil
}

// userBudgetQuery reads a user's budget.
const userBudgetQuery = `SELECT budget_nanos, budget_period FROM user_budgets WHERE user_id = ?`

// UserBudget implements store.UserBudgets. The read is cached (see
// readCache): a budget set through this Store holds at once, one set by
// another process on the same file within readTTL.
func (s *Store) UserBudget(ctx context.Context, userID string) (store.Budget, error) {
	now := s.now()
	if b, hit := s.budgets.get(userID, now); hit {
		return b, nil
	}
	gen := s.budgets.generation()
	b, err := s.readUserBudget(ctx, userID)
	if err == nil {
		s.budgets.put(userID, b, gen, now)
	}
	return b, err
}

// readUserBudget reads the user's budget from the file.
func (s *Store) readUserBudget(ctx context.Context, userID string) (store.Budget, error) {
	var b store.Budget
	st, err := s.userBudget.get(ctx, s.r)
	if err != nil {
		return store.Budget{}, fmt.Errorf("budget of user %s: %w", userID, err)
	}
	err = st.QueryRowContext(ctx, userID).Scan(&b.MaxNanos, &b.Period)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Budget{}, nil
	}
	if err != nil {
		return store.Budget{}, fmt.Errorf("budget of user %s: %w", userID, err)
	}
	return b, nil
}
