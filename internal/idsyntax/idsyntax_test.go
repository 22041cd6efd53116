package idsyntax

import (
	"regexp"
	"strings"
	"testing"
)

// inputs are the strings every check is compared on with its regexp.
func inputs() []string {
	out := []string{"", "a", "A", "0", "-", "_", ".", "+", "a-b", "a.b_c", "-a", ".a", "_a", "a b", "a\n", "\na",
		"é", "aé", "ab\x00", "12345678", "1234567", "abc", "ab",
		"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000",
		"123e4567e89b-12d3-a456-426614174000-", "123e4567-e89b-12d3-a456-42661417400g",
		"123e4567-e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3-a456-42661417400",
		"{123e4567-e89b-12d3-a456-426614174000}", "0123456789", "01234567890", "12a"}
	for _, n := range []int{63, 64, 65, 127, 128, 129, 254, 255, 256} {
		out = append(out, strings.Repeat("a", n), "x"+strings.Repeat("-", n-1), strings.Repeat("1", n))
	}
	return out
}

func TestAgainstRegexps(t *testing.T) {
	rest := NewSet(true, "_.-")
	cases := []struct {
		re    string
		check func(string) bool
	}{
		{`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`, func(s string) bool { return Plain(s, rest, 128) }},
		{`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`, func(s string) bool { return Plain(s, NewSet(true, "_.+-"), 64) }},
		{`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`, UUID},
		{`^[A-Za-z0-9._-]{8,128}$`, func(s string) bool { return rest.All(s, 8, 128) }},
		{`^[A-Za-z0-9_.-]{3,255}$`, func(s string) bool { return rest.All(s, 3, 255) }},
		{`^[a-zA-Z0-9_-]{1,64}$`, func(s string) bool { return NewSet(true, "_-").All(s, 1, 64) }},
		{`^[0-9]{1,10}$`, func(s string) bool { return NewSet(false, "0123456789").All(s, 1, 10) }},
	}
	for _, c := range cases {
		re := regexp.MustCompile(c.re)
		for _, in := range inputs() {
			if got, want := c.check(in), re.MatchString(in); got != want {
				t.Errorf("%s on %q: %v, the regexp says %v", c.re, in, got, want)
			}
		}
	}
}

func FuzzPlain(f *testing.F) {
	for _, in := range inputs() {
		f.Add(in)
	}
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	uuid := regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	rest := NewSet(true, "_.-")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Plain(s, rest, 128), re.MatchString(s); got != want {
			t.Errorf("Plain(%q) = %v, the regexp says %v", s, got, want)
		}
		if got, want := UUID(s), uuid.MatchString(s); got != want {
			t.Errorf("UUID(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}
