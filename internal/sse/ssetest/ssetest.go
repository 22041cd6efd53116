// Package ssetest reads Server-Sent Events the way a client receives
// them, for tests that compare streams byte for byte (a replay against
// the first delivery).
package ssetest

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
)

// Frame is one numbered SSE event as it was on the wire: its id and its
// whole block (the id line, the data lines and the blank line).
type Frame struct{ ID, Raw string }

// Data returns the payload of the frame's data lines.
func (f Frame) Data() string {
	var data []string
	for _, line := range strings.Split(f.Raw, "\n") {
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, v)
		}
	}
	return strings.Join(data, "\n")
}

// Event decodes the frame's payload as an agent event: its type and its
// content (empty for other events).
func (f Frame) Event() (typ, content string) {
	var ev struct{ Type, Content string }
	_ = json.Unmarshal([]byte(f.Data()), &ev)
	return ev.Type, ev.Content
}

// ReadFrames reads the numbered events of body until its end, or until
// stop (when not nil) says so after a frame; comments and unnumbered
// events (heartbeats) are skipped.
func ReadFrames(body io.Reader, stop func([]Frame) bool) []Frame {
	br := bufio.NewReader(body)
	var (
		out   []Frame
		block strings.Builder
		id    string
	)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out
		}
		switch {
		case line == "\n":
			if id != "" {
				out = append(out, Frame{ID: id, Raw: block.String() + "\n"})
				if stop != nil && stop(out) {
					return out
				}
			}
			block.Reset()
			id = ""
			continue
		case strings.HasPrefix(line, ":"):
			continue
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimSuffix(strings.TrimPrefix(line, "id: "), "\n")
		}
		block.WriteString(line)
	}
}

// Joined returns the frames' bytes in order.
func Joined(fs []Frame) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Raw)
	}
	return b.String()
}

// Content returns the concatenated content of the content events of fs
// and their number.
func Content(fs []Frame) (string, int) {
	var b strings.Builder
	n := 0
	for _, f := range fs {
		if typ, c := f.Event(); typ == "content" {
			b.WriteString(c)
			n++
		}
	}
	return b.String(), n
}
