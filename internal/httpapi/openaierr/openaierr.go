// Package openaierr is the one OpenAI-shaped error of agentchat's /v1
// routes: an error with its HTTP status, the error object
// {"error":{"message","type","param","code"}} it is answered with, the
// headers that go with it, and the one writer of it (Write). The generic
// router answers its own refusals of a /v1 route with it (401, 404, 405,
// a body it cannot decode, ...), and the gateway every failure of its own,
// before a stream started or, as the data of an error event, after.
//
// It imports the standard library only, so that every Lambda function may
// link it (see internal/deploy's dependency test).
package openaierr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HeaderShouldRetry is the header that tells OpenAI SDKs whether a failed
// request may be retried.
const HeaderShouldRetry = "X-Should-Retry"

// Error is an OpenAI-shaped error with its status.
type Error struct {
	Status  int
	Message string
	// Type defaults to the OpenAI type of Status (TypeOf).
	Type  string
	Param string
	// Code defaults to the snake_case status text.
	Code string
	// RetryAfter is sent as Retry-After when positive.
	RetryAfter time.Duration
	// NoRetry sends x-should-retry: false (a side effect happened, or
	// retrying cannot help); without it the header is removed, so that the
	// SDKs' own retry of 429 and 5xx applies.
	NoRetry bool
}

// Error returns the status and the message.
func (e *Error) Error() string { return strconv.Itoa(e.Status) + " " + e.Message }

// Invalid returns a 400 invalid_request_error about param.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Param: param}
}

// Object is the OpenAI error object. Param and Code are null when empty.
type Object struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Body is the JSON body of an error answer, {"error":{...}}, and the data
// of a stream's error event.
type Body struct {
	Error Object `json:"error"`
}

// Body returns the body e is answered with: its type and code defaulted
// from its status.
func (e *Error) Body() Body {
	o := Object{Message: e.Message, Type: e.Type}
	if o.Type == "" {
		o.Type = TypeOf(e.Status)
	}
	if e.Param != "" {
		p := e.Param
		o.Param = &p
	}
	code := e.Code
	if code == "" && e.Status > 0 {
		code = strings.ToLower(strings.ReplaceAll(http.StatusText(e.Status), " ", "_"))
	}
	if code != "" {
		o.Code = &code
	}
	return Body{Error: o}
}

// TypeOf maps an HTTP status to the OpenAI error type.
func TypeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == http.StatusConflict:
		return "conflict_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// Write answers e: its status, its headers (WWW-Authenticate for a 401,
// Retry-After, x-should-retry) and its body as JSON with a final newline.
func Write(w http.ResponseWriter, e *Error) {
	h := w.Header()
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", "Bearer")
	}
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	if e.NoRetry {
		h.Set(HeaderShouldRetry, "false")
	} else {
		h.Del(HeaderShouldRetry)
	}
	// Strings only: the encoding cannot fail.
	b, _ := json.Marshal(e.Body())
	h.Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(b, '\n'))
}
