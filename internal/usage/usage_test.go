package usage

import (
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

func TestParseQuery(t *testing.T) {
	now := time.Date(2026, 12, 4, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) // 2026-12-05 UTC
	for _, tc := range []struct {
		name, from, to, groupBy string
		want                    Query
		wantParam               string
	}{
		{name: "defaults", want: Query{UserID: "u", From: "2026-11-06", To: "2026-12-05", GroupBy: ByDay}},
		{name: "one day", from: "2026-12-01", to: "2026-12-01", groupBy: "model", want: Query{UserID: "u", From: "2026-12-01", To: "2026-12-01", GroupBy: ByModel}},
		{name: "to only", to: "2026-01-30", groupBy: "session", want: Query{UserID: "u", From: "2026-01-01", To: "2026-01-30", GroupBy: BySession}},
		{name: "a whole leap year", from: "2028-01-01", to: "2028-12-31", groupBy: "key", want: Query{UserID: "u", From: "2028-01-01", To: "2028-12-31", GroupBy: ByKey}},
		{name: "bad group", groupBy: "week", wantParam: "group_by"},
		{name: "bad from", from: "2026-13-01", wantParam: "from"},
		{name: "time, not day", to: "2026-12-01T00:00:00Z", wantParam: "to"},
		{name: "reversed", from: "2026-12-02", to: "2026-12-01", wantParam: "from"},
		{name: "too long", from: "2025-01-01", to: "2026-12-01", wantParam: "from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseQuery("u", tc.from, tc.to, tc.groupBy, now)
			if tc.wantParam != "" {
				qe, ok := errors.AsType[*QueryError](err)
				if !ok || qe.Param != tc.wantParam || qe.Message == "" {
					t.Fatalf("err = %v, want a QueryError on %s", err, tc.wantParam)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseQuery = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	row := func(day, model, key, session string, calls, nanos, unpriced int64) store.UsageRow {
		return store.UsageRow{
			UsageKey: store.UsageKey{UserID: "u", Day: day, Model: model, KeyID: key, ProjectID: "p", SessionID: session},
			Usage:    store.Usage{LLMCalls: calls, InputTokens: 10 * calls, OutputTokens: calls, CostNanos: nanos, UnpricedCalls: unpriced},
		}
	}
	rows := []store.UsageRow{
		row("2026-12-01", "a", "", "s1", 2, 1000, 0),
		row("2026-12-01", "b", "k1", "", 1, 0, 1),
		row("2026-12-02", "a", "k1", "", 3, 500, 0),
		row("2026-12-02", "a", "", "s1", 1, 7, 0),
	}
	for _, tc := range []struct {
		q          Query
		groups     []string
		nanos      []int64
		totalNanos int64
	}{
		{Query{GroupBy: ByDay}, []string{"2026-12-01", "2026-12-02"}, []int64{1000, 507}, 1507},
		{Query{GroupBy: ByModel}, []string{"a", "b"}, []int64{1507, 0}, 1507},
		{Query{GroupBy: ByKey}, []string{"", "k1"}, []int64{1007, 500}, 1507},
		{Query{GroupBy: BySession}, []string{"", "s1"}, []int64{500, 1007}, 1507},
		{Query{GroupBy: ByDay, KeyID: "k1"}, []string{"2026-12-01", "2026-12-02"}, []int64{0, 500}, 500},
	} {
		rep := Summarize(tc.q, rows)
		if len(rep.Data) != len(tc.groups) || rep.Total.CostNanos != tc.totalNanos {
			t.Fatalf("%+v: %+v", tc.q, rep)
		}
		for i, g := range rep.Data {
			name := g.Day + g.Model
			switch {
			case g.KeyID != nil:
				name = *g.KeyID
			case g.SessionID != nil:
				name = *g.SessionID
			}
			if name != tc.groups[i] || g.CostNanos != tc.nanos[i] {
				t.Errorf("%+v: group %d = %q %d nanos, want %q %d", tc.q, i, name, g.CostNanos, tc.groups[i], tc.nanos[i])
			}
		}
	}
	// A group of unpriced calls only has an unknown cost, not 0.
	rep := Summarize(Query{GroupBy: ByModel}, rows)
	if rep.Data[1].CostUSD != nil || rep.Data[1].UnpricedLLMCalls != 1 || rep.Data[0].CostUSD == nil || *rep.Data[0].CostUSD != 1507e-9 {
		t.Errorf("costs by model: %+v", rep.Data)
	}
	if empty := Summarize(Query{GroupBy: ByDay}, nil); len(empty.Data) != 0 || empty.Data == nil || empty.Total.CostUSD == nil || *empty.Total.CostUSD != 0 {
		t.Errorf("no rows: %+v", empty)
	}
}
