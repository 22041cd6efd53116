package contextwin

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// segmentMin is the length from which countText cuts a text into segments.
//
// The tokenizer's pre-split regular expression (a backtracking engine) takes
// time quadratic in the length of a whitespace run that holds line breaks:
// 32 KB of "  \n" take over a second, 1 MB would take many minutes, which a
// client could send on purpose. Such a run is split by the engine into pieces
// that each end at a line break, so cutting the text right after a line break
// that is followed by other whitespace falls on a piece boundary and leaves
// the count unchanged (TestSegmentedCountExact checks this against the
// unsegmented count), while bounding each run to about segmentMin bytes.
const segmentMin = 256

// countText counts s with c, cutting it into segments of at least minSeg bytes
// at the boundaries described at segmentMin.
func countText(c *codec.Codec, s string, minSeg int) int {
	n, start := 0, 0
	for i := start + minSeg; i < len(s); {
		j := strings.IndexAny(s[i:], "\r\n")
		if j < 0 {
			break
		}
		cut := i + j + 1 // just after the line break
		if cut < len(s) && s[cut] != '\n' && s[cut] != '\r' && isSpaceAt(s, cut) {
			n += count(c, s[start:cut])
			start = cut
			i = cut + minSeg
			continue
		}
		i = cut
	}
	return n + count(c, s[start:])
}

// isSpaceAt reports whether the rune at s[i:] is whitespace as the
// tokenizer's \s sees it.
func isSpaceAt(s string, i int) bool {
	if b := s[i]; b < utf8.RuneSelf {
		return b == ' ' || b == '\t' || b == '\v' || b == '\f'
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// count counts one segment. The codec fails only if its regular expression
// does (it has no time limit set); a byte-based estimate stands in then.
func count(c *codec.Codec, s string) int {
	if s == "" {
		return 0
	}
	n, err := c.Count(s)
	if err != nil {
		return (len(s) + 2) / 3
	}
	return n
}
