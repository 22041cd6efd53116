package store

import "context"

// Budget periods: the spend a budget bounds is counted over the current
// UTC day, the current UTC month, or every day (no period).
const (
	BudgetDay   = "day"
	BudgetMonth = "month"
	BudgetTotal = ""
)

// Budget bounds what LLM calls may cost over a period; the zero value is
// no budget.
type Budget struct {
	// MaxNanos is the most the calls may cost, in nano-dollars (0: no
	// budget).
	MaxNanos int64
	// Period is BudgetDay, BudgetMonth or BudgetTotal.
	Period string
}

// Set reports whether b bounds anything.
func (b Budget) Set() bool { return b.MaxNanos > 0 }

// ValidBudgetPeriod reports whether p is a budget period.
func ValidBudgetPeriod(p string) bool { return p == BudgetDay || p == BudgetMonth || p == BudgetTotal }

// UserBudgets stores the budgets of users, set by an administrator.
type UserBudgets interface {
	// SetUserBudget replaces the user's budget; the zero Budget removes it.
	SetUserBudget(ctx context.Context, userID string, b Budget) error
	// UserBudget returns the user's budget, the zero Budget when none.
	UserBudget(ctx context.Context, userID string) (Budget, error)
}
