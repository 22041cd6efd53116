package llm

import (
	"fmt"
	"testing"
)

// validJSON answers as json.Valid, also for a text that shares a
// remembered text's prefix or replaces it, and stays bounded.
func TestValidJSON(t *testing.T) {
	var v validJSON
	cases := []struct {
		text string
		want bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object"}`, true}, // remembered
		{`{"type":"object"`, false},
		{`{"type":"object"}}`, false},
		{``, false},
		{`[1,2,3]`, true},
		{`{"type":"object"} `, true},
	}
	for _, tc := range cases {
		for range 2 {
			if got := v.valid([]byte(tc.text)); got != tc.want {
				t.Errorf("valid(%q) = %v, want %v", tc.text, got, tc.want)
			}
		}
	}
	var nilV *validJSON
	if nilV.valid([]byte(`{`)) || !nilV.valid([]byte(`{}`)) {
		t.Error("a nil validJSON does not answer as json.Valid")
	}
	for i := range maxValidSchemas * 2 {
		v.valid(fmt.Appendf(nil, `{"n":%d}`, i))
	}
	if n := len(v.seen); n > maxValidSchemas {
		t.Errorf("%d texts remembered, bound %d", n, maxValidSchemas)
	}
}
