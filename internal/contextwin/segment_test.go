package contextwin

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Cutting at the segment boundaries gives the codec's own count: checked on
// random strings rich in the whitespace, line breaks and punctuation whose
// pre-split the boundaries must respect, with every boundary cut (minSeg 0).
func TestSegmentedCountExact(t *testing.T) {
	alphabet := []string{" ", " ", "  ", "\t", "\n", "\n", "\r", "\r\n", "\v", "\f",
		"\u00a0", "\u3000", "\u2028", "\u0085", "a", "Word", "1", "42", "!", "?!", "/", "'s", "'", "é", "你", "😀", "x y", "\n\t}", "-->"}
	r := rand.New(rand.NewPCG(7, 8))
	for _, model := range []string{"gpt-4", "gpt-4o"} {
		c := NewCounter(model)
		cd := c.enc.codec()
		for range 4000 {
			var b strings.Builder
			for range r.IntN(60) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			s := b.String()
			want, err := cd.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, minSeg := range []int{0, 8} {
				if got := countText(cd, s, minSeg); got != want {
					t.Fatalf("%s: countText(%q, %d) = %d, codec count %d", c.Encoding(), s, minSeg, got, want)
				}
			}
		}
	}
}

// Whitespace runs with line breaks take the tokenizer's regular expression
// quadratic time; segmented they are linear. 256 KB of them would take a
// minute unsegmented; this test takes about a second.
func TestLongWhitespaceRuns(t *testing.T) {
	for _, model := range []string{"gpt-4", "gpt-4o"} {
		c := NewCounter(model)
		cd := c.enc.codec()
		for _, unit := range []string{"  \n", " \t\n  \r\n", "\n ", "\u00a0\n", " \r"} {
			// Small enough to count unsegmented: the same count.
			small := "x" + strings.Repeat(unit, 3000/len(unit)) + "y"
			if got, want := c.Text(small), count(cd, small); got != want {
				t.Errorf("%s: Text(%d × %q) = %d, codec count %d", c.Encoding(), 3000/len(unit), unit, got, want)
			}
			big := strings.Repeat(unit, 1<<18/len(unit))
			if got := c.Text(big); got < len(big)/16 || got > len(big) {
				t.Errorf("%s: Text(%d × %q) = %d tokens for %d bytes", c.Encoding(), len(big)/len(unit), unit, got, len(big))
			}
		}
	}
}
