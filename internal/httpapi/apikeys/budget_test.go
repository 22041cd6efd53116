package apikeys

import (
	"encoding/json"
	"testing"

	"agentchat/internal/store"
)

func TestParseBudget(t *testing.T) {
	cur := store.Budget{MaxNanos: 2e9, Period: store.BudgetMonth}
	for _, tc := range []struct {
		max, period string
		want        store.Budget
		bad         bool
	}{
		{"", "", cur, false},
		{"5", "", store.Budget{MaxNanos: 5e9, Period: store.BudgetMonth}, false},
		{"0.000000001", `"day"`, store.Budget{MaxNanos: 1, Period: store.BudgetDay}, false},
		{"", "null", store.Budget{MaxNanos: 2e9}, false},
		{"null", "", store.Budget{}, false},
		{"0", `"day"`, store.Budget{}, false},
		{`"5"`, "", cur, true},
		{"-1", "", cur, true},
		{"1e7", "", cur, true},
		{"", `"week"`, cur, true},
		{"", `""`, cur, true},
		{"", `5`, cur, true},
	} {
		got, err := ParseBudget(json.RawMessage(tc.max), json.RawMessage(tc.period), cur)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParseBudget(%s, %s) = %+v, %v; want %+v (refused: %v)", tc.max, tc.period, got, err, tc.want, tc.bad)
		}
	}
}

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
