package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"agentchat/internal/httpapi/openaierr"
)

// ErrorStyle selects the shape of error bodies of a route.
type ErrorStyle int

const (
	// StyleGNS3 writes `{"message": "..."}`, the GNS3 convention.
	StyleGNS3 ErrorStyle = iota
	// StyleOpenAI writes `{"error": {"message","type","param","code"}}`
	// (package openaierr).
	StyleOpenAI
)

type styleKey struct{}

// WithStyle returns ctx carrying the error style of the route being served.
func WithStyle(ctx context.Context, s ErrorStyle) context.Context {
	return context.WithValue(ctx, styleKey{}, s)
}

// StyleFrom returns the error style of the route being served.
func StyleFrom(ctx context.Context) ErrorStyle {
	s, _ := ctx.Value(styleKey{}).(ErrorStyle)
	return s
}

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"message":"Internal server error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

// Error writes an error body with status in the style of the current route.
func Error(w http.ResponseWriter, r *http.Request, status int, message string) {
	if StyleFrom(r.Context()) == StyleOpenAI {
		openaierr.Write(w, &openaierr.Error{Status: status, Message: message})
		return
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	WriteJSON(w, status, map[string]string{"message": message})
}

// StatusError is an error that carries the HTTP status and the message to
// show the client.
type StatusError struct {
	Status  int
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header: whole
	// seconds, rounded up.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Refusal is an error of another package that tells the HTTP status and
// the public message it is answered with, such as the refusals of a
// ProjectChecker (gns3.ProjectError): this package needs no knowledge of
// where they come from.
type Refusal interface {
	error
	// Refusal returns the status and the message to show the client.
	Refusal() (status int, message string)
}

// RefusalOf returns the StatusError of the Refusal in err's chain, and
// false when err holds none.
func RefusalOf(err error) (*StatusError, bool) {
	var rf Refusal
	if !errors.As(err, &rf) {
		return nil, false
	}
	status, msg := rf.Refusal()
	return &StatusError{Status: status, Message: msg}, true
}

// StatusClientClosed is the status given to a request cancelled because
// its client went away (nginx's 499): nobody reads the answer, and it is no
// server failure, so that the access log and the alarms do not count it as
// one.
const StatusClientClosed = 499

// Errorf returns a *StatusError.
func Errorf(status int, format string, args ...any) *StatusError {
	return &StatusError{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Fail writes err: a *StatusError as it is, anything else as a 500 whose
// details go to the log only.
func Fail(w http.ResponseWriter, r *http.Request, err error) {
	var se *StatusError
	if errors.As(err, &se) {
		if se.RetryAfter > 0 {
			w.Header().Set("Retry-After", RetryAfterSeconds(se.RetryAfter))
		}
		Error(w, r, se.Status, se.Message)
		return
	}
	Logger(r.Context()).ErrorContext(r.Context(), "request failed", "err", err)
	Error(w, r, http.StatusInternalServerError, "Internal server error")
}

// RetryAfterSeconds is d as the value of a Retry-After header: a whole
// number of seconds, rounded up, at least 1.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// MaxBodyBytes is the largest JSON body accepted.
const MaxBodyBytes = 1 << 20

// DecodeOptions tune DecodeJSON.
type DecodeOptions struct {
	// DisallowUnknownFields rejects fields the target does not have (422).
	DisallowUnknownFields bool
	// MaxBytes overrides MaxBodyBytes.
	MaxBytes int64
}

// DecodeJSON decodes the request body into dst. It returns a *StatusError
// naming the problem: 413 for an oversize body, 400 for malformed JSON or
// an empty body, 422 for a wrong type or an unknown field.
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any, opt DecodeOptions) error {
	max := opt.MaxBytes
	if max <= 0 {
		max = MaxBodyBytes
	}
	body := http.MaxBytesReader(w, r.Body, max)
	dec := json.NewDecoder(body)
	if opt.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, max)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || errors.Is(err, os.ErrDeadlineExceeded) {
			return decodeError(err, max)
		}
		return Errorf(http.StatusBadRequest, "Request body must contain a single JSON object")
	}
	return nil
}

func decodeError(err error, max int64) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		maxErr    *http.MaxBytesError
	)
	switch {
	case errors.As(err, &maxErr):
		return Errorf(http.StatusRequestEntityTooLarge, "Request body must not be larger than %d bytes", max)
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's read deadline on the body (the local server's
		// BodyReadTimeout): the client declared a body it did not send.
		return Errorf(http.StatusRequestTimeout, "Request body not received in time")
	case errors.Is(err, io.EOF):
		return Errorf(http.StatusBadRequest, "Request body must not be empty")
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(http.StatusBadRequest, "Malformed JSON in request body")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return Errorf(http.StatusUnprocessableEntity, "Request body must be a JSON object")
		}
		return Errorf(http.StatusUnprocessableEntity, "Field '%s' must be of type %s", typeErr.Field, jsonTypeName(typeErr.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Errorf(http.StatusUnprocessableEntity, "Unknown field '%s'", truncate(field, 64))
	default:
		return Errorf(http.StatusBadRequest, "Invalid JSON in request body")
	}
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "float32", "float64", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "number"
	default:
		return kind
	}
}

type loggerKey struct{}

// WithLogger returns ctx carrying the request's logger.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// Logger returns the router's logger, or the default outside a router. Log
// with its *Context methods and the request's context: the records then
// carry the request id and user (package logctx).
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// HandlerFunc is a handler that returns its failure instead of writing it
// (Caddy's shape): ServeHTTP renders a returned error once, with Fail. A
// handler that has begun its answer (a stream's first byte) reports later
// failures in its own body and returns nil.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP calls f and writes the error it returns, if any, with Fail.
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		Fail(w, r, err)
	}
}
