// Package jsonstr writes JSON strings without reflection, byte for byte as
// encoding/json does, for the hot paths that encode events and requests by
// hand (a token chunk per streamed token).
package jsonstr

import "unicode/utf8"

// The ASCII bytes a JSON string carries as they are (encoding/json's
// htmlSafeSet): 0x20 to 0x7f but for '"', '&', '<', '>' and '\\'.
const (
	safeLow  uint64 = 0xffffffff00000000 &^ (1<<'"' | 1<<'&' | 1<<'<' | 1<<'>')
	safeHigh uint64 = ^uint64(0) &^ (1 << ('\\' - 64))
)

// asciiSafe reports whether the ASCII byte c needs no escape.
func asciiSafe(c byte) bool {
	if c < 64 {
		return safeLow>>c&1 != 0
	}
	return safeHigh>>(c-64)&1 != 0
}

const hexDigits = "0123456789abcdef"

// Append appends s to b as a JSON string exactly as encoding/json writes
// it: the short escapes, \u00XX for the other control characters and for
// <, > and &, \u2028 and \u2029, and U+FFFD for invalid UTF-8 (so the
// result is always valid JSON).
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSafe(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
