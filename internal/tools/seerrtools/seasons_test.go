package seerrtools

import (
	"encoding/json"
	"slices"
	"testing"
)

func FuzzParseSeasons(f *testing.F) {
	for _, s := range []string{``, `null`, `"all"`, `"ALL"`, `[1,2,2]`, `[]`, `[-1]`, `"x"`, `[1.5]`, `{}`, `[0,99999999999]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		all, seasons, err := parseSeasons(json.RawMessage(in))
		if err != nil {
			if all || seasons != nil {
				t.Fatalf("error with result: %v %v", all, seasons)
			}
			return
		}
		if all == (seasons != nil) {
			t.Fatalf("all=%v seasons=%v", all, seasons)
		}
		if !slices.IsSorted(seasons) || len(slices.Compact(slices.Clone(seasons))) != len(seasons) {
			t.Fatalf("seasons not sorted/unique: %v", seasons)
		}
		for _, n := range seasons {
			if n < 0 {
				t.Fatalf("negative season %d", n)
			}
		}
	})
}
