package console

import (
	"bytes"
	"unicode/utf8"
)

// cleaner turns the data a console sends into the text a terminal would
// show, incrementally (a sequence may be split across reads): ANSI escape
// sequences (CSI, OSC, charset and single-character ones) are removed, CR
// LF becomes LF, a lone CR erases the current line (what follows
// overwrites it), a backspace erases the character before it, and other
// control characters are dropped. Tabs and newlines are kept.
type cleaner struct {
	state int
	cr    bool // a CR was seen, its meaning depends on the next byte
}

// Escape states.
const (
	csText = iota
	csEsc
	csCSI
	csOSC
	csOSCEsc
	csCharset
)

// feed appends the cleaned form of in to out and returns out.
func (c *cleaner) feed(out, in []byte) []byte {
	for _, b := range in {
		switch c.state {
		case csEsc:
			switch b {
			case '[':
				c.state = csCSI
			case ']':
				c.state = csOSC
			case '(', ')', '*', '+', '#', '%':
				c.state = csCharset
			default: // a two-byte sequence (ESC 7, ESC M, ESC =, ...)
				c.state = csText
			}
			continue
		case csCSI: // parameters and intermediates until a final byte
			if b >= 0x40 && b <= 0x7e {
				c.state = csText
			}
			continue
		case csOSC: // until BEL or ST (ESC \)
			switch b {
			case 0x07:
				c.state = csText
			case 0x1b:
				c.state = csOSCEsc
			}
			continue
		case csOSCEsc:
			c.state = csText
			if b != '\\' {
				c.state = csOSC
			}
			continue
		case csCharset:
			c.state = csText
			continue
		}
		if c.cr {
			switch b {
			case '\r': // CR CR: still one pending CR
				continue
			case '\n':
				c.cr = false
				out = append(out, '\n')
				continue
			default: // a lone CR (CR NUL included): back to the line start
				c.cr = false
				out = eraseLine(out)
				if b == 0 {
					continue
				}
			}
		}
		switch {
		case b == 0x1b:
			c.state = csEsc
		case b == '\r':
			c.cr = true
		case b == '\b':
			out = eraseRune(out)
		case b == '\n', b == '\t':
			out = append(out, b)
		case b < 0x20, b == 0x7f: // BEL, NUL, other controls
		default:
			out = append(out, b)
		}
	}
	return out
}

// eraseLine removes the text after the last newline of out.
func eraseLine(out []byte) []byte {
	return out[:bytes.LastIndexByte(out, '\n')+1]
}

// eraseRune removes the last character of out unless it ends a line.
func eraseRune(out []byte) []byte {
	if len(out) == 0 || out[len(out)-1] == '\n' {
		return out
	}
	_, n := utf8.DecodeLastRune(out)
	return out[:len(out)-n]
}

// Clean returns s as a terminal would show it: see cleaner. It is the
// cleaning Session applies to everything a device sends.
func Clean(s string) string {
	var c cleaner
	return string(c.feed(nil, []byte(s))) // a CR at the very end only moves the cursor
}
