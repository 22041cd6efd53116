package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"
)

// Kind classifies an LLM call failure.
type Kind string

// The kinds of LLM call failure.
const (
	// KindAuth: the provider rejected the credentials (401, 403).
	KindAuth Kind = "auth"
	// KindRateLimit: the provider is throttling requests (429).
	KindRateLimit Kind = "rate_limit"
	// KindQuota: the provider account has no quota left (429 insufficient_quota).
	KindQuota Kind = "quota"
	// KindServer: the provider failed (5xx or an error event in the stream).
	KindServer Kind = "server"
	// KindConnection: the provider could not be reached or hung up.
	KindConnection Kind = "connection"
	// KindTimeout: the call did not finish within its deadline.
	KindTimeout Kind = "timeout"
	// KindBadRequest: the provider (or the client library) rejected the request.
	KindBadRequest Kind = "bad_request"
	// KindBadResponse: the provider sent something that is not a valid answer.
	KindBadResponse Kind = "bad_response"
	// KindCancelled: the caller cancelled the call.
	KindCancelled Kind = "cancelled"
)

// Error is a failed LLM call. Its texts never contain the API key, an
// Authorization header or anything that looks like a token.
type Error struct {
	Kind Kind
	// Status is the HTTP status the provider answered, 0 when none.
	Status int
	// Detail is the provider's (sanitized, truncated) message, if any.
	Detail string
	// RetryAfter is the delay the provider asked for, 0 when none.
	RetryAfter time.Duration
	// Attempts is the number of HTTP attempts made.
	Attempts int
	// Param is the request field the provider named in its error (its
	// error object's param), empty when none.
	Param string

	user  string // overrides the kind's default user message
	cause error  // context error for cancelled/timeout kinds
	// public is true when Detail is the provider's own JSON error message,
	// fit to show a person (an HTML error page never is).
	public bool
}

// Error describes the failure for logs (sanitized).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("llm: ")
	b.WriteString(string(e.Kind))
	if e.Status > 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns context.Canceled or context.DeadlineExceeded for the
// cancelled and timeout kinds, ErrAnswerTooLarge for an answer past its
// cap, ErrBlockedAddress for a base URL the Guard refused, nil otherwise
// (the raw upstream error is not kept because it may echo secrets).
func (e *Error) Unwrap() error { return e.cause }

// Retryable reports whether the failure may go away on a new attempt.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindRateLimit, KindServer, KindConnection:
		return true
	}
	return false
}

// UserMessage is a sentence a person understands, without secrets.
func (e *Error) UserMessage() string {
	if e.user != "" {
		return e.user
	}
	st := ""
	if e.Status > 0 {
		st = fmt.Sprintf(" (%d)", e.Status)
	}
	switch e.Kind {
	case KindAuth:
		return "The LLM provider rejected the API key" + st + "."
	case KindRateLimit:
		return "The LLM provider is rate limiting requests" + st + ". Try again shortly."
	case KindQuota:
		return "The LLM provider account has exceeded its quota" + st + "."
	case KindServer:
		return "The LLM provider failed" + st + "."
	case KindConnection:
		return "Could not reach the LLM provider."
	case KindTimeout:
		return "The LLM provider did not answer in time."
	case KindBadRequest:
		if e.public && e.Detail != "" && !looksLikeMarkup(e.Detail) {
			return "The LLM provider rejected the request" + st + ": " + e.Detail
		}
		return "The LLM provider rejected the request" + st + "."
	case KindBadResponse:
		return "The LLM provider sent a malformed response."
	case KindCancelled:
		return "The LLM call was cancelled."
	}
	return "The LLM call failed" + st + "."
}

// UserMessage turns any error of an LLM call into a sentence a person
// understands. It never returns the raw text of an unknown error, which
// could carry secrets.
func UserMessage(err error) string {
	var le *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le):
		return le.UserMessage()
	case errors.Is(err, ErrNotConfigured):
		return "LLM configuration not found. Please configure your LLM settings first."
	case errors.Is(err, context.DeadlineExceeded):
		return "The LLM provider did not answer in time."
	case errors.Is(err, context.Canceled):
		return "The LLM call was cancelled."
	}
	return "The LLM call failed."
}

// errStreamTruncated: the stream ended without [DONE] nor a finish reason.
var errStreamTruncated = errors.New("stream ended before [DONE]")

// maxDetail bounds the provider message kept in an Error.
const maxDetail = 300

// secretPatterns match secrets in an upstream text; keyValue matches
// "api_key=…", "Authorization: …" and the like, keeping the name (group 1)
// and redacting the value. They are compiled on the first failed call's
// text (most processes sanitize none): 64 kB of heap otherwise held from
// start.
type secretPatterns struct {
	secrets  []*regexp.Regexp
	keyValue *regexp.Regexp
}

var patterns = sync.OnceValue(func() secretPatterns {
	return secretPatterns{
		secrets: []*regexp.Regexp{
			regexp.MustCompile(`(?i)bearer\s+[^\s"',;]+`),
			regexp.MustCompile(`\bsk-[A-Za-z0-9_\-*.]{3,}`),
			regexp.MustCompile(`\b(?:gsk|xai|pk|rk)[_-][A-Za-z0-9_\-*]{8,}`),
			regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{20,}`),
			regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`),
		},
		keyValue: regexp.MustCompile(`(?i)((?:api[_-]?key|authorization|access[_-]?token|secret|password)["']?\s*[:=]\s*["']?)[^\s"',;]+`),
	}
})

// sanitize removes secrets from an upstream text and bounds its length.
func sanitize(s, apiKey string) string {
	if s == "" {
		return ""
	}
	if apiKey != "" {
		s = strings.ReplaceAll(s, apiKey, "[redacted]")
	}
	p := patterns()
	for _, re := range p.secrets {
		s = re.ReplaceAllString(s, "[redacted]")
	}
	s = p.keyValue.ReplaceAllString(s, "${1}[redacted]")
	s = strings.Join(strings.Fields(stripControls(s)), " ")
	if len(s) > maxDetail {
		cut := maxDetail
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// stripControls makes s valid UTF-8 and turns its control characters
// (C0 but for white space, DEL, C1) and format characters (bidirectional
// overrides, zero-width ones) into spaces: an upstream text cannot move a
// terminal's cursor, hide text or reorder what a person reads.
func stripControls(s string) string {
	s = strings.ToValidUTF8(s, "�")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return ' '
		}
		return r
	}, s)
}

// classify maps an error of one attempt to an *Error. parent is the
// caller's context, call the per-call context derived from it.
func classify(parent, call context.Context, err error, apiKey string) *Error {
	if err == nil {
		return nil
	}
	var le *Error
	if errors.As(err, &le) {
		return le
	}
	// A context that ended explains whatever the transport reported: one
	// of the call's bounds (a *boundError cause), the caller's deadline,
	// or a cancellation.
	if call.Err() != nil {
		var be *boundError
		switch {
		case errors.As(context.Cause(call), &be):
			return be.llmError()
		case errors.Is(parent.Err(), context.DeadlineExceeded):
			return &Error{Kind: KindTimeout, cause: context.DeadlineExceeded}
		}
		return &Error{Kind: KindCancelled, cause: context.Canceled}
	}

	var blocked *BlockedAddressError
	if errors.As(err, &blocked) {
		return &Error{Kind: KindBadRequest, Detail: "base URL address not allowed: " + blocked.Class,
			user: blocked.Error(), cause: ErrBlockedAddress}
	}

	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		e := fromStatus(apiErr.HTTPStatusCode, apiErr.Message, apiErr.Type, codeString(apiErr.Code), apiKey)
		e.public = true
		if apiErr.Param != nil {
			e.Param = clipParam(*apiErr.Param)
		}
		return e
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		// A body that is not an OpenAI error object (an HTML page, a
		// proxy's text) is never echoed, not even to logs.
		detail := fmt.Sprintf("HTTP %d from the model server", reqErr.HTTPStatusCode)
		if t := http.StatusText(reqErr.HTTPStatusCode); t != "" {
			detail += " (" + t + ")"
		}
		return fromStatus(reqErr.HTTPStatusCode, detail, "", "", apiKey)
	}

	var synErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &synErr), errors.As(err, &typeErr),
		errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return &Error{Kind: KindBadResponse, Detail: sanitize(err.Error(), apiKey)}
	case errors.Is(err, errStreamTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: KindConnection, Detail: "connection closed before the end of the answer",
			user: "The LLM provider closed the connection before finishing its answer."}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return &Error{Kind: KindTimeout, Detail: "network timeout", cause: context.DeadlineExceeded}
	case errors.Is(err, openai.ErrChatCompletionInvalidModel),
		errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated),
		errors.Is(err, openai.ErrReasoningModelLimitationsLogprobs),
		errors.Is(err, openai.ErrReasoningModelLimitationsOther),
		errors.Is(err, openai.ErrReasoningEffortUnsupported),
		errors.Is(err, openai.ErrReasoningToolsRequireResponses),
		errors.Is(err, openai.ErrReasoningSamplingUnsupported),
		errors.Is(err, openai.ErrContentFieldsMisused):
		return &Error{Kind: KindBadRequest, Detail: sanitize(err.Error(), apiKey)}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &Error{Kind: KindTimeout, Detail: "network timeout", cause: context.DeadlineExceeded}
	}
	// Everything else comes from the transport: refused, reset, DNS, TLS, EOF.
	return &Error{Kind: KindConnection, Detail: sanitize(transportDetail(err), apiKey)}
}

// transportDetail drops the URL that *url.Error adds (it may carry
// credentials in userinfo or query) and keeps the cause.
func transportDetail(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.Error()
	}
	if errors.Is(err, io.EOF) {
		return "connection closed by the provider"
	}
	return "connection failed"
}

func codeString(code any) string {
	switch c := code.(type) {
	case nil:
		return ""
	case string:
		return c
	default:
		return fmt.Sprint(c)
	}
}

// fromStatus builds the Error of an HTTP error answer (status 0: an error
// event inside an otherwise successful stream).
func fromStatus(status int, message, typ, code, apiKey string) *Error {
	e := &Error{Status: status, Detail: sanitize(message, apiKey)}
	switch {
	case status == 0:
		e.Kind = KindServer
		switch {
		case code == "rate_limit_exceeded" || typ == "rate_limit_error":
			e.Kind = KindRateLimit
		case typ == "invalid_request_error":
			// The provider refused the request inside its stream (some
			// check fields only once they start answering).
			e.Kind = KindBadRequest
		}
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		e.Kind = KindAuth
	case status == http.StatusTooManyRequests:
		e.Kind = KindRateLimit
		if code == "insufficient_quota" || typ == "insufficient_quota" {
			e.Kind = KindQuota
		}
	case status == http.StatusRequestTimeout:
		e.Kind = KindTimeout
		e.cause = context.DeadlineExceeded
	case status >= 500:
		e.Kind = KindServer
	default:
		e.Kind = KindBadRequest
	}
	return e
}

// looksLikeMarkup reports whether s holds HTML or XML tags, which an error
// shown to a person must not carry.
func looksLikeMarkup(s string) bool {
	i := strings.IndexByte(s, '<')
	return i >= 0 && strings.IndexByte(s[i:], '>') > 0
}

// maxParamLen bounds the param a provider names.
const maxParamLen = 128

// clipParam keeps a provider's param short and printable: it names a
// request field, nothing longer.
func clipParam(p string) string {
	p = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, p)
	if len(p) > maxParamLen {
		p = p[:maxParamLen]
	}
	return strings.ToValidUTF8(p, "")
}
