package httpapi_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"agentchat/internal/httpapi"
)

// stalledBody yields its text, then fails as a connection read past its
// deadline does (the client declared more than it sent).
type stalledBody struct{ r io.Reader }

func (b stalledBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, fmt.Errorf("read tcp 127.0.0.1:1->127.0.0.1:2: %w", os.ErrDeadlineExceeded)
	}
	return n, err
}

// TestDecodeJSONStatus: each way a body can be wrong has its status and
// message; a body that stops arriving is a 408, not a JSON error.
func TestDecodeJSONStatus(t *testing.T) {
	tests := []struct {
		name   string
		body   io.Reader
		status int
		msg    string
	}{
		{"stalled before any byte", stalledBody{strings.NewReader("")}, http.StatusRequestTimeout, "Request body not received in time"},
		{"stalled mid-object", stalledBody{strings.NewReader(`{"message":`)}, http.StatusRequestTimeout, "Request body not received in time"},
		{"stalled after the object", stalledBody{strings.NewReader(`{"message":"hi"}`)}, http.StatusRequestTimeout, "Request body not received in time"},
		{"oversize", strings.NewReader(`{"message":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`), http.StatusRequestEntityTooLarge, "Request body must not be larger than 1048576 bytes"},
		{"empty", strings.NewReader(""), http.StatusBadRequest, "Request body must not be empty"},
		{"malformed", strings.NewReader(`{"message":`), http.StatusBadRequest, "Malformed JSON in request body"},
		{"two objects", strings.NewReader(`{} {}`), http.StatusBadRequest, "Request body must contain a single JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/x", io.NopCloser(tc.body))
			var dst map[string]any
			err := httpapi.DecodeJSON(httptest.NewRecorder(), req, &dst, httpapi.DecodeOptions{})
			var se *httpapi.StatusError
			if !errors.As(err, &se) || se.Status != tc.status || se.Message != tc.msg {
				t.Fatalf("DecodeJSON = %v, want %d %q", err, tc.status, tc.msg)
			}
		})
	}
}
