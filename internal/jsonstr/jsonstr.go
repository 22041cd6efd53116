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

// Eight bytes at once (SWAR): lsb has a 1 in each byte, msb each byte's
// high bit.
const (
	lsb uint64 = 0x0101010101010101
	msb uint64 = 0x8080808080808080
)

// load8 reads s[i:i+8] as a little-endian word (one load once compiled).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// zeroByte has a byte's high bit set when (and, for the first such byte,
// only when) that byte of v is zero; zero when v has no zero byte.
func zeroByte(v uint64) uint64 { return (v - lsb) &^ v & msb }

// safe8 reports whether the eight bytes of x are all ASCII needing no
// escape (asciiSafe): none at or above 0x80, none below 0x20, none of
// '"', '&', '<', '>' and '\'. '<' and '>' differ in one bit (0x02), as
// '"' and '&' do (0x04), so each pair is one test.
func safe8(x uint64) bool {
	bad := x & msb
	bad |= (x - lsb*0x20) &^ x & msb // a byte below 0x20 (no byte is 0x80 or more here)
	bad |= zeroByte((x ^ lsb*'<') &^ (lsb * 0x02))
	bad |= zeroByte((x ^ lsb*'"') &^ (lsb * 0x04))
	bad |= zeroByte(x ^ lsb*'\\')
	return bad == 0
}

// Append appends s to b as a JSON string exactly as encoding/json writes
// it: the short escapes, \u00XX for the other control characters and for
// <, > and &, \u2028 and \u2029, and U+FFFD for invalid UTF-8 (so the
// result is always valid JSON).
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Byte by byte over the next word when it needs any care, four
		// words when it holds multi-byte UTF-8 (more is likely to follow),
		// a rune possibly carrying i a little further; then eight at once
		// again.
		span := 8
		for i+8 <= len(s) {
			x := load8(s, i)
			if !safe8(x) {
				if x&msb != 0 {
					span = 32
				}
				break
			}
			i += 8
		}
		for end := min(i+span, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				i++
				if asciiSafe(c) {
					continue
				}
				b = append(b, s[start:i-1]...)
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
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
