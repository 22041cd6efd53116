package localserver

import (
	"runtime/debug"
	"testing"
)

// TuneGC sets GCPercent unless the environment sets GOGC.
func TestTuneGC(t *testing.T) {
	restore := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(restore) })
	cases := []struct {
		gogc string
		want int
	}{
		{"", GCPercent},
		{"200", 100}, // the runtime applied GOGC at start; TuneGC leaves it
		{"off", 100},
	}
	for _, tc := range cases {
		debug.SetGCPercent(100)
		TuneGC(func(k string) string {
			if k == "GOGC" {
				return tc.gogc
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.gogc, got, tc.want)
		}
	}
}
