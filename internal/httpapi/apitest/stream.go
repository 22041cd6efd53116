package apitest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Stream is an open SSE response read event by event.
type Stream struct {
	Status int
	Header http.Header
	resp   *http.Response
	br     *bufio.Reader
	cancel context.CancelFunc
	// Comments counts the comment lines read so far.
	Comments int
}

// OpenStream POSTs body to path as user (no Authorization when user is
// empty) and returns the response for reading events. The request is
// cancelled by Close or when the test ends.
func (e *Env) OpenStream(user, path string, body any) *Stream {
	e.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Server.URL+path, bodyReader(e.T, body))
	if err != nil {
		cancel()
		e.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if user != "" && e.Verifier != nil {
		req.Header.Set("Authorization", "Bearer "+e.Token(user))
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		cancel()
		e.T.Fatalf("POST %s: %v", path, err)
	}
	s := &Stream{Status: resp.StatusCode, Header: resp.Header, resp: resp, br: bufio.NewReader(resp.Body), cancel: cancel}
	e.T.Cleanup(s.Close)
	return s
}

// Close hangs up.
func (s *Stream) Close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// Body reads the rest of a non-SSE response.
func (s *Stream) Body(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	_, _ = s.br.WriteTo(&b)
	return b.String()
}

// NextData returns the payload of the next data event, skipping comments;
// ok is false at the end of the stream.
func (s *Stream) NextData() (data string, ok bool) {
	var lines []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return "", false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(lines) > 0 {
				return strings.Join(lines, "\n"), true
			}
		case strings.HasPrefix(line, ":"):
			s.Comments++
		case strings.HasPrefix(line, "data: "):
			lines = append(lines, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "data:"):
			lines = append(lines, strings.TrimPrefix(line, "data:"))
		}
	}
}

// Next decodes the next data event as a JSON object; ok is false at the
// end of the stream.
func (s *Stream) Next(t testing.TB) (map[string]any, bool) {
	t.Helper()
	data, ok := s.NextData()
	if !ok {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event %q is not a JSON object: %v", data, err)
	}
	return m, true
}

// All reads every remaining event.
func (s *Stream) All(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for {
		m, ok := s.Next(t)
		if !ok {
			return out
		}
		out = append(out, m)
	}
}
