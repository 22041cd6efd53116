package httpapi

import (
	"net/http"
	"strings"

	"agentchat/internal/telemetry"
)

// metered wraps mux to count, in d.Metrics, the SSE streams open (an
// answer whose Content-Type is text/event-stream counts from its header
// to the end of its handler) and the 409 and 429 answers by route
// template. With metrics off it returns mux itself.
func (d Deps) metered(mux *http.ServeMux) http.Handler {
	m := d.Metrics
	if m == nil {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &streamWatch{ResponseWriter: w, m: m}
		defer func() {
			if sw.stream {
				m.StreamClosed()
			}
			route := r.Method
			if rt := routeOf(r.Pattern); rt != "" {
				route += " " + rt
			}
			m.Refused(route, sw.status)
		}()
		mux.ServeHTTP(sw, r)
	})
}

// streamWatch notes the status of an answer and whether it is an SSE
// stream, counting the stream as open when its header is written.
type streamWatch struct {
	http.ResponseWriter
	m      *telemetry.Metrics
	status int
	stream bool
}

func (s *streamWatch) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		if strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
			s.stream = true
			s.m.StreamOpened()
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *streamWatch) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Flush flushes the wrapped writer (streams flush each event).
func (s *streamWatch) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the wrapped writer.
func (s *streamWatch) Unwrap() http.ResponseWriter { return s.ResponseWriter }
