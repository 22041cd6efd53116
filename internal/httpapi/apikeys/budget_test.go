package apikeys

import (
	"testing"

	"agentchat/internal/store"
)

func TestBudgetRaised(t *testing.T) {
	day := store.Budget{MaxNanos: 100, Period: store.BudgetDay}
	month := store.Budget{MaxNanos: 100, Period: store.BudgetMonth}
	total := store.Budget{MaxNanos: 100}
	for _, tc := range []struct {
		cur, next store.Budget
		raised    bool
	}{
		{store.Budget{}, day, false},
		{day, store.Budget{}, true},
		{day, store.Budget{MaxNanos: 99, Period: store.BudgetDay}, false},
		{day, store.Budget{MaxNanos: 101, Period: store.BudgetDay}, true},
		{day, month, false},
		{month, day, true},
		{total, month, true},
		{month, total, false},
	} {
		if got := budgetRaised(tc.cur, tc.next); got != tc.raised {
			t.Errorf("budgetRaised(%+v, %+v) = %v, want %v", tc.cur, tc.next, got, tc.raised)
		}
	}
}
