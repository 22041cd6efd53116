package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// This file reads the server-sent events of a streamed chat completion
// with the semantics of go-openai's streamReader (stream_reader.go), which
// it replaces, without regular expressions and without allocating per line:
//
//   - a line is what ends with "\n"; it is trimmed of white space (CRLF
//     included); a last line without "\n" is dropped;
//   - a "data:" line (spaces after the colon optional) is a chunk, and
//     "data: [DONE]" ends the stream (io.EOF from then on);
//   - every other line (blank lines, ":" comments, "event:", "id:",
//     "retry:") is skipped, but counts towards emptyMessagesLimit lines in a
//     row (more: openai.ErrTooManyEmptyStreamMessages) and is kept, so that
//     an error object a server sent as plain lines is reported when the
//     body ends;
//   - a `data: {"error":` line ends the stream with that error (the API
//     error wrapped as "error, %w") once the next line is read.

// emptyMessagesLimit is go-openai's default EmptyMessagesLimit: the most
// non-data lines in a row before a chunk.
const emptyMessagesLimit = 300

// maxErrorLines bounds the non-data lines kept for the error check (an
// error object is far smaller; beyond it none is looked for).
const maxErrorLines = 64 << 10

// maxSSELine bounds one line of the stream: a server that sends more
// without a newline is not sending server-sent events. A stream's own
// bound is lower when its answer's cap is (see newSSEReader).
const maxSSELine = 16 << 20

// maxPooledLine is the largest long-line scratch kept with a pooled reader.
const maxPooledLine = 64 << 10

// sseBufferSize is the read buffer of a stream: lines up to it are read
// in place, longer ones are copied into the reader's scratch.
const sseBufferSize = 4 << 10

// lineTooLong is the error of a stream whose line exceeds its bound (a
// new value each time: the client fills in its attempts): the answer's
// too-large error when the bound derives from the cap maxAnswer, which a
// line past it cannot fit.
func (s *sseReader) lineTooLong() *Error {
	if s.maxAnswer > 0 && int64(s.maxLine) == wireLimit(s.maxAnswer) {
		e := answerTooLarge(s.maxAnswer)
		e.Detail = fmt.Sprintf("a line of the stream is longer than %d bytes, past the answer's cap", s.maxLine)
		return e
	}
	return &Error{Kind: KindBadResponse, Detail: fmt.Sprintf("a line of the stream is longer than %d MiB", cmp.Or(s.maxLine, maxSSELine)>>20)}
}

// sseReaders holds readers for reuse across streams.
var sseReaders = sync.Pool{New: func() any {
	return &sseReader{r: bufio.NewReaderSize(nil, sseBufferSize)}
}}

// sseReader reads the data lines of one stream.
type sseReader struct {
	r        *bufio.Reader
	long     []byte // a line longer than the buffer
	errLines []byte // the non-data lines, trimmed and joined (go-openai's error accumulator)
	// noError is true once errLines cannot be an error object any more
	// (it does not start with '{', or grew beyond maxErrorLines).
	noError  bool
	finished bool
	// maxLine bounds a line (0: maxSSELine); maxAnswer is the answer's
	// cap it derives from (0: none).
	maxLine, maxAnswer int
}

// newSSEReader returns a reader of body from the pool; release gives it
// back. A line is bounded by maxSSELine, or by what an answer of maxAnswer
// bytes can take on the wire (wireLimit) when that is less; maxAnswer 0:
// no cap.
func newSSEReader(body io.Reader, maxAnswer int) *sseReader {
	s := sseReaders.Get().(*sseReader)
	s.r.Reset(body)
	s.maxLine, s.maxAnswer = maxSSELine, maxAnswer
	if maxAnswer > 0 && wireLimit(maxAnswer) < maxSSELine {
		s.maxLine = int(wireLimit(maxAnswer))
	}
	return s
}

// release returns s to the pool; s and the lines it returned are not used
// afterwards.
func (s *sseReader) release() {
	s.r.Reset(nil)
	if cap(s.long) > maxPooledLine {
		s.long = nil
	}
	s.long = s.long[:0]
	s.errLines = s.errLines[:0]
	if cap(s.errLines) > maxPooledLine {
		s.errLines = nil
	}
	s.noError = false
	s.finished = false
	sseReaders.Put(s)
}

// next returns the payload of the next data line (valid until the next
// call), io.EOF after [DONE] or at the end of the body, or the error that
// ended the stream. As go-openai's, it returns (nil, nil) when a
// `data: {"error":` line does not hold an error object.
func (s *sseReader) next() ([]byte, error) {
	if s.finished {
		return nil, io.EOF
	}
	var empty int
	errorLine := false
	for {
		line, readErr := s.readLine()
		if readErr != nil || errorLine {
			if apiErr := s.streamError(); apiErr != nil {
				return nil, fmt.Errorf("error, %w", apiErr)
			}
			return nil, readErr
		}
		line = bytes.TrimSpace(line)
		payload, data := cutData(line)
		if data && bytes.HasPrefix(payload, []byte(`{"error":`)) {
			errorLine = true
		}
		if !data || errorLine {
			if errorLine {
				line = payload
			}
			s.keepErrorLine(line)
			empty++
			if empty > emptyMessagesLimit {
				return nil, openai.ErrTooManyEmptyStreamMessages
			}
			continue
		}
		if string(payload) == "[DONE]" {
			s.finished = true
			return nil, io.EOF
		}
		return payload, nil
	}
}

// ready reports whether next returns without reading from the body: the
// stream ended, or a whole data line (not an error line, after which next
// reads one more) is already buffered.
func (s *sseReader) ready() bool {
	if s.finished {
		return true
	}
	b, _ := s.r.Peek(s.r.Buffered())
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		if payload, data := cutData(bytes.TrimSpace(b[:i])); data {
			return !bytes.HasPrefix(payload, []byte(`{"error":`))
		}
		b = b[i+1:]
	}
}

// readLine reads through the next "\n": in place in the buffer, or in the
// scratch for a line longer than the buffer.
func (s *sseReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	s.long = append(s.long[:0], line...)
	for {
		line, err = s.r.ReadSlice('\n')
		if len(s.long)+len(line) > cmp.Or(s.maxLine, maxSSELine) {
			return nil, s.lineTooLong()
		}
		s.long = append(s.long, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return s.long, err
		}
	}
}

// cutData strips "data:" and the spaces after it (regexp `^data:\s*`,
// where \s is [\t\n\f\r ]); false when line is not a data line.
func cutData(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line, false
	}
	for len(rest) > 0 {
		switch rest[0] {
		case ' ', '\t', '\n', '\f', '\r':
			rest = rest[1:]
			continue
		}
		break
	}
	return rest, true
}

// keepErrorLine appends a trimmed non-data line to the error lines, as
// long as they may still form an error object: JSON that does not start
// with '{' is never one (the lines are trimmed, so nothing precedes it).
func (s *sseReader) keepErrorLine(line []byte) {
	if s.noError || len(line) == 0 {
		return
	}
	if len(s.errLines) == 0 && line[0] != '{' || len(s.errLines)+len(line) > maxErrorLines {
		s.noError = true
		s.errLines = s.errLines[:0]
		return
	}
	s.errLines = append(s.errLines, line...)
}

// streamError decodes the error lines as go-openai does: the API error of
// an {"error":{...}} object, nil for anything else.
func (s *sseReader) streamError() *openai.APIError {
	if s.noError || len(s.errLines) == 0 {
		return nil
	}
	var resp *openai.ErrorResponse
	if err := json.Unmarshal(s.errLines, &resp); err != nil || resp == nil {
		return nil
	}
	return resp.Error
}
