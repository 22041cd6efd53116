package llm

import (
	"errors"
	"fmt"
	"io"
)

// DefaultMaxAnswerBytes is the cap of one answer when Config.MaxAnswerBytes
// is 0 (LLM_MAX_ANSWER_BYTES' default).
const DefaultMaxAnswerBytes = 1 << 20

// ErrAnswerTooLarge matches the *Error of a call whose answer went past
// Config.MaxAnswerBytes. The Result returned with it holds the answer cut
// at the cap.
var ErrAnswerTooLarge = errors.New("llm: answer too large")

// wireOverhead is the room an answer takes on the wire beside its text:
// the JSON envelope of a chunk or of a whole answer.
const wireOverhead = 64 << 10

// wireLimit is the most bytes the encoding of an answer of max bytes
// takes: JSON writes a byte in at most 6 (\u00XX), plus the envelope. A
// line of a stream, or a non-streamed body, longer than that holds an
// answer past the cap.
func wireLimit(max int) int64 { return 6*int64(max) + wireOverhead }

// answerTooLarge is the error of an answer past max bytes.
func answerTooLarge(max int) *Error {
	return &Error{Kind: KindBadResponse, cause: ErrAnswerTooLarge,
		Detail: fmt.Sprintf("the answer is longer than %d bytes", max),
		user: fmt.Sprintf("The model's answer was longer than the limit of %s (LLM_MAX_ANSWER_BYTES): it was cut there.",
			formatBytes(max))}
}

// formatBytes writes n as "1 MiB", "64 KiB" or "1500 bytes".
func formatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// budget counts the bytes of one answer against its cap.
type budget struct {
	max  int // the cap
	used int
}

// take returns the prefix of s that fits (cut on a rune boundary) and
// counts it; cut is true when s did not fit whole.
func (b *budget) take(s string) (part string, cut bool) {
	left := b.max - b.used
	if len(s) <= left {
		b.used += len(s)
		return s, false
	}
	n := max(left, 0)
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	b.used += n
	return s[:n], true
}

// cutResult cuts a non-streamed answer to max bytes (reasoning, then
// content, then the tool calls in order); it reports whether anything was
// cut.
func cutResult(r *Result, max int) bool {
	b := budget{max: max}
	var cut, c bool
	r.Reasoning, c = b.take(r.Reasoning)
	cut = cut || c
	r.Content, c = b.take(r.Content)
	cut = cut || c
	for i := range r.ToolCalls {
		tc := &r.ToolCalls[i]
		if cut {
			r.ToolCalls = r.ToolCalls[:i]
			break
		}
		if _, c = b.take(tc.ID + tc.Function.Name); c {
			r.ToolCalls, cut = r.ToolCalls[:i], true
			break
		}
		tc.Function.Arguments, c = b.take(tc.Function.Arguments)
		cut = cut || c
	}
	return cut
}

// cappedBody is the body of a non-streamed answer, read up to limit bytes:
// past it, reading fails with the answer's too-large error instead of
// holding more.
type cappedBody struct {
	rc      io.ReadCloser
	left    int64
	err     *Error // answerTooLarge
	tripped bool
}

// Read reads from the body, failing past the limit.
func (b *cappedBody) Read(p []byte) (int, error) {
	if b.tripped {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		b.tripped = true
		return 0, b.err
	}
	b.left -= int64(n)
	return n, err
}

// Close closes the body.
func (b *cappedBody) Close() error { return b.rc.Close() }
