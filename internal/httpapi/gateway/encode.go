package gateway

import (
	"strconv"
	"unicode/utf8"
)

// tokenChunks encodes the content and reasoning chunks of one stream
// without reflection: the bytes encoding/json gives for cs.chunk (the
// prefix and suffix are the same for every chunk of the stream).
type tokenChunks struct {
	prefix []byte // {"id":...,"choices":[{"index":0,"delta":{
	suffix []byte // },"logprobs":null,"finish_reason":null}]...}
	buf    []byte
}

func newTokenChunks(id string, created int64, model string, includeUsage bool) *tokenChunks {
	t := &tokenChunks{}
	t.prefix = append(t.prefix, `{"id":`...)
	t.prefix = appendJSONString(t.prefix, id)
	t.prefix = append(t.prefix, `,"object":"chat.completion.chunk","created":`...)
	t.prefix = strconv.AppendInt(t.prefix, created, 10)
	t.prefix = append(t.prefix, `,"model":`...)
	t.prefix = appendJSONString(t.prefix, model)
	t.prefix = append(t.prefix, `,"choices":[{"index":0,"delta":{`...)
	t.suffix = append(t.suffix, `},"logprobs":null,"finish_reason":null}]`...)
	if includeUsage {
		t.suffix = append(t.suffix, `,"usage":null`...)
	}
	t.suffix = append(t.suffix, '}')
	return t
}

// content returns the chunk of a content delta (valid until the next
// call).
func (t *tokenChunks) content(text string) []byte {
	return t.encode(`"content":`, text)
}

// reasoning returns the chunk of a reasoning delta (text not empty).
func (t *tokenChunks) reasoning(text string) []byte {
	return t.encode(`"reasoning_content":`, text)
}

func (t *tokenChunks) encode(key, text string) []byte {
	b := append(t.buf[:0], t.prefix...)
	b = append(b, key...)
	b = appendJSONString(b, text)
	b = append(b, t.suffix...)
	t.buf = b
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it: the short escapes, \u00XX for the other control characters
// and for <, > and &, \u2028 and \u2029, and U+FFFD for invalid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
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
