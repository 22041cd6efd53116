package budget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"agentchat/internal/store"
)

// ledger is an in-memory Store.
type ledger struct {
	rows   []store.UsageRow
	budget store.Budget
	reads  int
}

func (l *ledger) AddUsage(context.Context, store.UsageKey, store.Usage) error { return nil }
func (l *ledger) ListUsage(_ context.Context, user, from, to string) ([]store.UsageRow, error) {
	l.reads++
	var out []store.UsageRow
	for _, r := range l.rows {
		if r.UserID == user && r.Day >= from && r.Day <= to {
			out = append(out, r)
		}
	}
	return out, nil
}
func (l *ledger) SetUserBudget(_ context.Context, _ string, b store.Budget) error {
	l.budget = b
	return nil
}
func (l *ledger) UserBudget(context.Context, string) (store.Budget, error) { return l.budget, nil }

func TestLeft(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	row := func(day, key string, nanos int64) store.UsageRow {
		return store.UsageRow{UsageKey: store.UsageKey{UserID: "u", Day: day, Model: "m", KeyID: key}, Usage: store.Usage{CostNanos: nanos}}
	}
	rows := []store.UsageRow{
		row("2026-11-30", "", 1000), // last month
		row("2026-12-01", "k", 300),
		row("2026-12-04", "", 200),
		row("2026-12-04", "k", 50),
		row("2026-12-04", "other", 7),
	}
	for _, tc := range []struct {
		name      string
		user, key store.Budget
		keyID     string
		want      Limit
		exceeded  string
		reads     int
	}{
		{name: "none", reads: 0},
		{name: "user month", user: store.Budget{MaxNanos: 1000, Period: store.BudgetMonth},
			want: Limit{Set: true, LeftNanos: 1000 - 557, Of: OfUser, Budget: store.Budget{MaxNanos: 1000, Period: store.BudgetMonth}, SpentNanos: 557}, reads: 1},
		{name: "user total spent", user: store.Budget{MaxNanos: 1557}, exceeded: "Your budget of $0.000002 is spent", reads: 1},
		{name: "key day tighter", user: store.Budget{MaxNanos: 10_000, Period: store.BudgetDay}, key: store.Budget{MaxNanos: 60, Period: store.BudgetDay}, keyID: "k",
			want: Limit{Set: true, LeftNanos: 10, Of: OfKey, Budget: store.Budget{MaxNanos: 60, Period: store.BudgetDay}, SpentNanos: 50}, reads: 1},
		{name: "key month spent", key: store.Budget{MaxNanos: 350, Period: store.BudgetMonth}, keyID: "k", exceeded: "This API key's monthly budget", reads: 1},
		{name: "a key budget without a key is none", key: store.Budget{MaxNanos: 1}, reads: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &ledger{rows: rows, budget: tc.user}
			got, err := Checker{Store: l, Now: func() time.Time { return now }}.Left(context.Background(), "u", tc.keyID, tc.key)
			if tc.exceeded != "" {
				ee, ok := errors.AsType[*ExceededError](err)
				if !ok || !strings.Contains(ee.Error(), tc.exceeded) {
					t.Fatalf("err = %v, want %q", err, tc.exceeded)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("Left = %+v, %v; want %+v", got, err, tc.want)
			}
			if l.reads != tc.reads {
				t.Errorf("%d ledger reads, want %d", l.reads, tc.reads)
			}
		})
	}
}

func TestWindowAndText(t *testing.T) {
	now := time.Date(2026, 12, 4, 23, 0, 0, 0, time.FixedZone("x", -3600)) // 2026-12-05 UTC
	for _, tc := range []struct{ period, from, to string }{
		{store.BudgetDay, "2026-12-05", "2026-12-05"},
		{store.BudgetMonth, "2026-12-01", "2026-12-05"},
		{store.BudgetTotal, "0000-01-01", "2026-12-05"},
	} {
		if from, to := Window(tc.period, now); from != tc.from || to != tc.to {
			t.Errorf("Window(%q) = %s..%s, want %s..%s", tc.period, from, to, tc.from, tc.to)
		}
	}
	for _, tc := range []struct {
		e    ExceededError
		want string
	}{
		{ExceededError{Of: OfUser, Budget: store.Budget{MaxNanos: 5e9, Period: store.BudgetMonth}, SpentNanos: 5_012_345_678},
			"Your monthly budget of $5.00 is spent ($5.012346 used this month, UTC). It renews on the first day of next month (UTC)."},
		{ExceededError{Of: OfKey, Budget: store.Budget{MaxNanos: 1e6, Period: store.BudgetDay}, SpentNanos: 1e6},
			"This API key's daily budget of $0.001 is spent ($0.001 used today, UTC). It renews at midnight UTC."},
		{ExceededError{Of: OfUser, Budget: store.Budget{MaxNanos: 25e8}, SpentNanos: 3e9}, "Your budget of $2.50 is spent ($3.00 used)."},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q\nwant      %q", got, tc.want)
		}
	}
}
