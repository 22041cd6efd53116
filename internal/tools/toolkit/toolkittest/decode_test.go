package toolkittest

import (
	"fmt"
	"strings"
	"testing"

	"agentchat/internal/tools/toolkit"
)

// fakeT records the errors of a check.
type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func TestDecodeChecksTheEnvelope(t *testing.T) {
	statuses := []string{toolkit.StatusSuccess, toolkit.StatusFailed}
	for out, want := range map[string]string{
		`{"success":true,"total":1,"successful":1,"failed":0,"results":[{"status":"success"}]}`:                      "",
		`{"success":false,"total":1,"successful":0,"failed":1,"results":[{"status":"failed","error":"x"}]}`:          "",
		`{"success":true,"total":2,"successful":1,"failed":0,"results":[{"status":"success"}]}`:                      "inconsistent counts",
		`{"success":false,"total":1,"successful":0,"failed":1,"results":[{"status":"partial_success","error":"x"}]}`: `item status "partial_success"`,
		`{"success":true,"total":1,"successful":1,"failed":0,"results":[{"status":"success","error":""}]}`:           "successful item with an error",
		`{"success":false,"total":1,"successful":0,"failed":1,"results":[{"status":"failed"}]}`:                      "failed item without an error",
		`{"success":false,"total":1,"successful":0,"failed":1,"results":[{"status":"failed","error":""}]}`:           "failed item without an error",
	} {
		f := &fakeT{TB: t}
		a := Decode[toolkit.Report[map[string]any]](f, out, nil, statuses...)
		got := strings.Join(f.errs, "; ")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: errors %q, want %q", out, got, want)
		}
		if a.Total == 0 {
			t.Errorf("%s: not decoded", out)
		}
	}
}
