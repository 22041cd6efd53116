package toolkittest

import (
	"encoding/json"
	"slices"
	"testing"

	"agentchat/internal/tools/toolkit"
)

// Decode decodes the answer out of a tool, whose error is err, into an A,
// failing t at once on an error or an answer that is not JSON, then
// checks the envelope: every result has one of statuses, an error unless
// it is a success and none if it is, and the counts agree with the
// results.
func Decode[A any](t testing.TB, out string, err error, statuses ...string) A {
	t.Helper()
	var v A
	if err != nil {
		t.Fatalf("tool error: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, out)
	}
	var a toolkit.Report[struct {
		Status string  `json:"status"`
		Error  *string `json:"error"`
	}]
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("answer is not an envelope: %v: %s", err, out)
	}
	ok := 0
	for _, r := range a.Results {
		switch {
		case !slices.Contains(statuses, r.Status):
			t.Errorf("item status %q: %s", r.Status, out)
		case r.Status == toolkit.StatusSuccess:
			ok++
			if r.Error != nil {
				t.Errorf("successful item with an error: %s", out)
			}
		case r.Error == nil || *r.Error == "":
			t.Errorf("%s item without an error: %s", r.Status, out)
		}
	}
	if a.Total != len(a.Results) || a.Successful != ok || a.Failed != a.Total-ok || a.Success != (a.Failed == 0) {
		t.Errorf("inconsistent counts: %s", out)
	}
	return v
}
