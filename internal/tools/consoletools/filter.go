package consoletools

import (
	"strings"
)

// DefaultBlocked returns the default blocked command prefixes: commands
// that hang a console, flood it, or destroy the device's configuration or
// session.
func DefaultBlocked() []string {
	return []string{"traceroute", "tracepath", "debug", "test", "ping -f", "reload", "erase", "write erase", "format", "exit"}
}

// Filter blocks commands by prefix. Commands and prefixes are compared
// case-insensitively after trimming and collapsing blanks. A prefix
// matches whole words at the start of the command: "exit" blocks "exit"
// and "EXIT  now" but not "exit-address-family", "ping -f" blocks
// "ping -f 10.0.0.1"; a leading "do " (an exec command run from the
// configuration mode) is looked through.
type Filter struct {
	prefixes []string
}

// NewFilter returns a filter of prefixes (empty ones are ignored).
func NewFilter(prefixes []string) *Filter {
	f := &Filter{}
	for _, p := range prefixes {
		if p = normalizeCommand(p); p != "" {
			f.prefixes = append(f.prefixes, p)
		}
	}
	return f
}

// Prefixes returns the normalized prefixes.
func (f *Filter) Prefixes() []string { return append([]string(nil), f.prefixes...) }

// Match returns the prefix that blocks command, if any.
func (f *Filter) Match(command string) (string, bool) {
	c := normalizeCommand(command)
	for {
		for _, p := range f.prefixes {
			if strings.HasPrefix(c, p) && (len(c) == len(p) || wordBoundary(c[len(p)])) {
				return p, true
			}
		}
		rest, ok := strings.CutPrefix(c, "do ")
		if !ok {
			return "", false
		}
		c = rest
	}
}

// normalizeCommand lowercases s and collapses its blanks.
func normalizeCommand(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// wordBoundary reports whether b, the byte after a matched prefix, ends
// the prefix's last word.
func wordBoundary(b byte) bool {
	return !(b >= 'a' && b <= 'z' || b == '-' || b == '_')
}
