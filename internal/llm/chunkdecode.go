package llm

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeFast parses the usual chat.completion.chunk into c (reset by the
// caller) without reflection: content, reasoning and refusal deltas, the
// finish reason, the model, a null usage. It reports false, leaving c in
// any state, for anything else (tool calls, a usage object, an escape or a
// number it does not handle, a key that only matches case-insensitively,
// malformed JSON...), which encoding/json then decodes, so that both give
// the same result on every input the fast path accepts.
func decodeFast(b []byte, c *streamChunk) bool {
	p := chunkParser{b: b}
	p.ws()
	if !p.object(func(key []byte) bool {
		switch string(key) {
		case "model":
			return p.model(c)
		case "choices":
			if p.sawChoices {
				return false // encoding/json would merge both arrays' elements
			}
			p.sawChoices = true
			return p.choices(c)
		case "usage":
			return p.null() // a usage object: encoding/json
		}
		return !foldsTo(key, "model", "choices", "usage") && p.skip(0)
	}) {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

// chunkParser reads strict JSON (RFC 8259) from b.
type chunkParser struct {
	b          []byte
	i          int
	sawChoices bool
	str        []byte // scratch for unescaped strings
}

// maxSkipDepth bounds the nesting of skipped values (deeper: encoding/json).
const maxSkipDepth = 64

func (p *chunkParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (p *chunkParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// lit consumes the literal s.
func (p *chunkParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// null consumes null.
func (p *chunkParser) null() bool {
	p.ws()
	return p.lit("null")
}

// object reads an object (or null: no members), calling member for each
// key with the parser at its value; member reads the value.
func (p *chunkParser) object(member func(key []byte) bool) bool {
	switch p.peek() {
	case 'n':
		return p.lit("null")
	case '{':
		p.i++
	default:
		return false
	}
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		if p.peek() != '"' {
			return false
		}
		key, ok := p.rawString()
		if !ok || hasNonASCII(key) {
			return false // non-ASCII keys fold in ways kept for encoding/json
		}
		if p.peek() != ':' {
			return false
		}
		p.i++
		p.ws()
		if !member(key) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// rawString consumes a string without escapes and returns its bytes
// (keys); a string with escapes is left to encoding/json.
func (p *chunkParser) rawString() ([]byte, bool) {
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// strInto reads a string into *dst, or null (leaving *dst as it is, as
// encoding/json does).
func (p *chunkParser) strInto(dst *string) bool {
	b, null, ok := p.stringOrNull()
	if ok && !null {
		*dst = string(b)
	}
	return ok
}

// model reads the model into c.Model, or null: the same name as the
// chunk before (every chunk of a stream repeats it) reuses that string
// instead of allocating it again.
func (p *chunkParser) model(c *streamChunk) bool {
	b, null, ok := p.stringOrNull()
	if !ok || null {
		return ok
	}
	if string(b) != c.lastModel {
		c.lastModel = string(b)
	}
	c.Model = c.lastModel
	return true
}

// stringOrNull reads a string (its bytes, as stringBytes) or null.
func (p *chunkParser) stringOrNull() (b []byte, null, ok bool) {
	switch p.peek() {
	case 'n':
		return nil, true, p.lit("null")
	case '"':
		b, ok = p.stringBytes()
		return b, false, ok
	}
	return nil, false, false
}

// stringBytes reads a string value (valid UTF-8, the usual escapes and \u
// escapes, surrogate pairs included; a lone surrogate is left to
// encoding/json, which replaces it) and returns its bytes without
// allocating: a slice of the input, or of the parser's scratch for a
// string with escapes (valid until the next string read).
func (p *chunkParser) stringBytes() ([]byte, bool) {
	start := p.i + 1
	ascii := true
	j := start
	for ; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			return p.escaped(start)
		}
		if c < 0x20 {
			return nil, false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if j == len(p.b) {
		return nil, false
	}
	raw := p.b[start:j]
	if !ascii && !utf8.Valid(raw) {
		return nil, false
	}
	p.i = j + 1
	return raw, true
}

// escaped reads a string with escapes from start (just after its quote)
// into the parser's scratch.
func (p *chunkParser) escaped(start int) ([]byte, bool) {
	out := p.str[:0]
	j := start
	for j < len(p.b) {
		c := p.b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, false
			}
			p.i = j + 1
			p.str = out
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(p.b) {
			return nil, false
		}
		switch e := p.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := p.unicode(j)
			if n == 0 {
				return nil, false
			}
			out = utf8.AppendRune(out, r)
			j += n
			continue
		default:
			return nil, false
		}
		j += 2
	}
	return nil, false
}

// unicode reads \uXXXX (and its low surrogate) at j; n is the length
// read, 0 when it is not a plain code point or a surrogate pair.
func (p *chunkParser) unicode(j int) (rune, int) {
	r, ok := hex4(p.b, j+2)
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if r >= 0xdc00 || j+12 > len(p.b) || p.b[j+6] != '\\' || p.b[j+7] != 'u' {
		return 0, 0
	}
	lo, ok := hex4(p.b, j+8)
	if !ok || lo < 0xdc00 || lo > 0xdfff {
		return 0, 0
	}
	return utf16.DecodeRune(r, lo), 12
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// int reads a small integer (no fraction, no exponent: encoding/json
// refuses those for an int, and the fast path leaves them to it).
func (p *chunkParser) int(dst *int) bool {
	if p.peek() == 'n' {
		return p.lit("null")
	}
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	digits := p.i
	n := 0
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	switch {
	case p.i == digits, p.i-digits > 9, p.b[digits] == '0' && p.i-digits > 1:
		return false
	}
	if p.i < len(p.b) {
		if c := p.b[p.i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// choices reads the choices array into c.Choices.
func (p *chunkParser) choices(c *streamChunk) bool {
	switch p.peek() {
	case 'n':
		if !p.lit("null") {
			return false
		}
		c.Choices = nil
		return true
	case '[':
		p.i++
	default:
		return false
	}
	c.Choices = c.Choices[:0]
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		c.Choices = append(c.Choices, streamChoice{})
		ch := &c.Choices[len(c.Choices)-1]
		if !p.object(func(key []byte) bool {
			switch string(key) {
			case "index":
				return p.int(&ch.Index)
			case "finish_reason":
				return p.strInto(&ch.FinishReason)
			case "delta":
				return p.delta(&ch.Delta)
			case "logprobs":
				return p.null() // logprobs: encoding/json
			}
			return !foldsTo(key, "index", "finish_reason", "delta", "logprobs") && p.skip(0)
		}) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// delta reads a delta; tool calls are left to encoding/json.
func (p *chunkParser) delta(d *streamDelta) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return p.strInto(&d.Content)
		case "reasoning_content":
			return p.strInto(&d.ReasoningContent)
		case "refusal":
			return p.strInto(&d.Refusal)
		case "tool_calls":
			return p.null()
		}
		return !foldsTo(key, "content", "reasoning_content", "refusal", "tool_calls") && p.skip(0)
	})
}

// skip reads any value without keeping it.
func (p *chunkParser) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch c := p.peek(); {
	case c == '"':
		_, ok := p.stringBytes()
		return ok
	case c == '{':
		return p.object(func([]byte) bool { return p.skip(depth + 1) })
	case c == '[':
		p.i++
		if p.peek() == ']' {
			p.i++
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *chunkParser) number() bool {
	b := p.b
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	p.i = i
	return true
}

// foldsTo reports whether key matches one of names only case-insensitively
// (encoding/json would decode it into that field).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if len(n) == len(key) && strings.EqualFold(n, string(key)) {
			return true
		}
	}
	return false
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}
