package budgetreq

import (
	"encoding/json"
	"testing"

	"agentchat/internal/store"
)

func TestParse(t *testing.T) {
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
		got, err := Parse(json.RawMessage(tc.max), json.RawMessage(tc.period), cur)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("Parse(%s, %s) = %+v, %v; want %+v (refused: %v)", tc.max, tc.period, got, err, tc.want, tc.bad)
		}
	}
}
