// Package idsyntax checks the syntax of plain identifiers (ids, names,
// UUIDs) byte by byte. The checks replace the anchored regular expressions
// of the same forms: a bounded repetition such as {0,127} compiles into a
// program that many instructions long, and every package-level regexp is
// compiled at start and held for the life of the process (tens of kB
// each: 0.38 MB of the local server's live heap for the ten it had).
package idsyntax

// Set is a set of ASCII bytes.
type Set [256]bool

// NewSet returns the set of the ASCII letters and digits (when alnum),
// plus the bytes of extra.
func NewSet(alnum bool, extra string) *Set {
	var s Set
	if alnum {
		for c := '0'; c <= '9'; c++ {
			s[c] = true
		}
		for c := 'a'; c <= 'z'; c++ {
			s[c] = true
			s[c-'a'+'A'] = true
		}
	}
	for i := 0; i < len(extra); i++ {
		s[extra[i]] = true
	}
	return &s
}

// All reports whether every byte of id is in s and its length is within
// [min, max]: the regexp ^[s]{min,max}$.
func (s *Set) All(id string, min, max int) bool {
	if len(id) < min || len(id) > max {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !s[id[i]] {
			return false
		}
	}
	return true
}

var alnum = NewSet(true, "")

// Plain reports whether id starts with an ASCII letter or digit followed
// by at most max-1 bytes of rest: the regexp ^[A-Za-z0-9][rest]{0,max-1}$.
func Plain(id string, rest *Set, max int) bool {
	return id != "" && alnum[id[0]] && rest.All(id[1:], 0, max-1)
}

var hex = NewSet(false, "0123456789abcdefABCDEF")

// UUID reports whether s is a UUID in its 8-4-4-4-12 hexadecimal form,
// of either case: the regexp
// ^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$.
func UUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !hex[s[i]] {
				return false
			}
		}
	}
	return true
}
