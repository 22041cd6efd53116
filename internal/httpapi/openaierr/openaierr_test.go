package openaierr

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// written answers e with Write, after presetting x-should-retry when
// preset.
func written(t *testing.T, e *Error, preset bool, wantBody string) http.Header {
	t.Helper()
	rec := httptest.NewRecorder()
	if preset {
		rec.Header().Set(HeaderShouldRetry, "false")
	}
	Write(rec, e)
	if rec.Code != e.Status || rec.Body.String() != wantBody+"\n" {
		t.Errorf("%v: got %d %s\nwant %d %s", e, rec.Code, rec.Body, e.Status, wantBody)
	}
	return rec.Header()
}

func wantHeader(t *testing.T, h http.Header, name, want string) {
	t.Helper()
	if got := h.Get(name); got != want {
		t.Errorf("%s = %q, want %q", name, got, want)
	}
}

// TestWriteDefaults: type and code come from the status, param is null.
func TestWriteDefaults(t *testing.T) {
	h := written(t, &Error{Status: http.StatusNotFound, Message: "Not found"}, false,
		`{"error":{"message":"Not found","type":"not_found_error","param":null,"code":"not_found"}}`)
	wantHeader(t, h, "Content-Type", "application/json")
	wantHeader(t, h, "WWW-Authenticate", "")
	wantHeader(t, h, "Retry-After", "")

	h = written(t, &Error{Status: http.StatusUnauthorized, Message: "Not authenticated"}, false,
		`{"error":{"message":"Not authenticated","type":"authentication_error","param":null,"code":"unauthorized"}}`)
	wantHeader(t, h, "WWW-Authenticate", "Bearer")

	// A status without a text has a null code.
	written(t, &Error{Status: 499, Message: "gone"}, false,
		`{"error":{"message":"gone","type":"invalid_request_error","param":null,"code":null}}`)
}

// TestWriteInvalid: a 400 about a param, which drops an x-should-retry set
// before.
func TestWriteInvalid(t *testing.T) {
	h := written(t, Invalid("stop", "'stop' accepts at most %d sequences (got %d).", 4, 5), true,
		`{"error":{"message":"'stop' accepts at most 4 sequences (got 5).","type":"invalid_request_error","param":"stop","code":"bad_request"}}`)
	wantHeader(t, h, HeaderShouldRetry, "")
}

// TestWriteEverythingSet: type, param and code as given, Retry-After in
// whole seconds rounded up, x-should-retry false.
func TestWriteEverythingSet(t *testing.T) {
	e := &Error{Status: http.StatusTooManyRequests, Message: "m <&>", Type: "insufficient_quota", Param: "p", Code: "c",
		RetryAfter: 1500 * time.Millisecond, NoRetry: true}
	h := written(t, e, false, `{"error":{"message":"m \u003c\u0026\u003e","type":"insufficient_quota","param":"p","code":"c"}}`)
	wantHeader(t, h, "Retry-After", "2")
	wantHeader(t, h, HeaderShouldRetry, "false")
}
