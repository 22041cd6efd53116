package agent

import (
	"fmt"
	"unicode/utf8"
)

// capToolOutput returns out when it holds at most max bytes (or max <= 0);
// otherwise its first max bytes or fewer, cut at a UTF-8 boundary, followed
// by a note giving where it was cut and the whole length, so that the
// model (and the user) know the output is incomplete.
func capToolOutput(out string, max int) string {
	if max <= 0 || len(out) <= max {
		return out
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut] + fmt.Sprintf("\n[output cut at %d bytes of %d]", cut, len(out))
}
