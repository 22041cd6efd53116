package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"agentchat/internal/llm"
)

// TestUpstreamErrorBodies: an error answer of a model server is reduced to
// its OpenAI error.message, without control characters and shortened; a
// body that is not an OpenAI error (an HTML page, a proxy's text) is never
// echoed, not even in the log text; a huge error body is not read whole.
func TestUpstreamErrorBodies(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		// want is in the user message; never in any text of the error.
		want, never []string
	}{
		{name: "an OpenAI message is shown", status: 400, ctype: "application/json",
			body: `{"error":{"message":"model 'x' not found","type":"invalid_request_error"}}`,
			want: []string{"rejected the request (400): model 'x' not found"}},
		{name: "control characters are stripped", status: 400, ctype: "application/json",
			body:  `{"error":{"message":"bad\u001b[2J\u001b[31m red\u0007\u0000 \u202eevil\u200b \u0085x\u007f","type":"invalid_request_error"}}`,
			want:  []string{"bad [2J [31m red evil x"},
			never: []string{"\x1b", "\a", "\x00", "\u202e", "\u200b", "\u0085", "\x7f"}},
		{name: "a long message is shortened", status: 400, ctype: "application/json",
			body: `{"error":{"message":"` + strings.Repeat("long ", 2000) + `","type":"invalid_request_error"}}`,
			want: []string{"long long long", "…"}},
		{name: "an HTML page is not echoed", status: 502, ctype: "text/html",
			body:  `<html><body><h1>Bad Gateway</h1><p>upstream internal-llm.corp.example:8443 refused; trace id 42</p></body></html>`,
			want:  []string{"The LLM provider failed (502)."},
			never: []string{"internal-llm", "trace id", "<html", "Bad Gateway</h1>"}},
		{name: "a proxy's text is not echoed", status: 400, ctype: "text/plain",
			body:  "denied by policy for 10.1.2.3 user=admin",
			want:  []string{"The LLM provider rejected the request (400)."},
			never: []string{"10.1.2.3", "admin", "policy"}},
		{name: "JSON that is not an OpenAI error is not echoed", status: 404, ctype: "application/json",
			body:  `{"detail":"Not Found: /srv/internal/path"}`,
			never: []string{"/srv/internal"}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			t.Run(tt.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", tt.ctype)
					w.WriteHeader(tt.status)
					_, _ = io.WriteString(w, tt.body)
				}))
				defer srv.Close()
				c := newClient(t, srv.URL+"/v1", func(c *llm.Config) { c.MaxRetries = -1 })
				var err error
				if stream {
					_, err = c.Stream(context.Background(), userMsg("hi"), nil)
				} else {
					_, err = c.Complete(context.Background(), userMsg("hi"))
				}
				var le *llm.Error
				if !errors.As(err, &le) || le.Status != tt.status {
					t.Fatalf("error %v", err)
				}
				texts := []string{le.Error(), le.Detail, le.UserMessage()}
				for _, w := range tt.want {
					if !strings.Contains(le.UserMessage(), w) {
						t.Errorf("user message %q, want %q in it", le.UserMessage(), w)
					}
				}
				for _, text := range texts {
					for _, n := range tt.never {
						if strings.Contains(text, n) {
							t.Errorf("%q holds %q", text, n)
						}
					}
					if strings.IndexFunc(text, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0 {
						t.Errorf("%q holds a control character", text)
					}
				}
				if len(le.Detail) > 310 {
					t.Errorf("detail of %d bytes", len(le.Detail))
				}
			})
		}
	}
}

// TestHugeErrorBodyIsNotReadWhole: a 150 MB error body is read up to a
// bound on both paths.
func TestHugeErrorBodyIsNotReadWhole(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv, _ := hugeServer(t, func(w io.Writer) int64 {
			w.(http.ResponseWriter).WriteHeader(http.StatusInternalServerError)
			return repeatWrite(w, []byte(`{"error":{"message":"`), []byte(filler), []byte(`"}}`), hugeAnswer)
		})
		c := newClient(t, srv.URL+"/v1", func(c *llm.Config) { c.MaxRetries = -1 })
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if stream {
			_, err = c.Stream(context.Background(), userMsg("hi"), nil)
		} else {
			_, err = c.Complete(context.Background(), userMsg("hi"))
		}
		runtime.ReadMemStats(&after)
		srv.CloseClientConnections()
		var le *llm.Error
		if !errors.As(err, &le) || le.Status != http.StatusInternalServerError || strings.Contains(le.Error(), filler[:1000]) {
			t.Fatalf("stream %v: error %.200v", stream, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > memBound {
			t.Fatalf("stream %v: reading the error allocated %d MiB", stream, alloc>>20)
		}
	}
}
