package gns3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
)

// invalidIDError is an id that cannot be a GNS3 v3 id; it matches
// ErrInvalidID.
type invalidIDError struct {
	kind string // project, node, link, template
	id   string // shortened
}

func (e *invalidIDError) Error() string {
	return fmt.Sprintf("%s: %s id %q", ErrInvalidID, e.kind, e.id)
}

func (e *invalidIDError) Unwrap() error { return ErrInvalidID }

// actionError is a node action NodeAction does not know; no request was
// sent.
type actionError struct{ action string }

func (e *actionError) Error() string {
	return fmt.Sprintf("gns3: unsupported node action %q (want start, stop or suspend)", e.action)
}

// unavailableError is a transport failure or an unreadable answer; it
// matches ErrUnavailable. reason is short and holds no address.
type unavailableError struct {
	reason string
	cause  error
}

func (e *unavailableError) Error() string {
	if e.cause == nil {
		return fmt.Sprintf("%s: %s", ErrUnavailable, e.reason)
	}
	return fmt.Sprintf("%s: %s: %v", ErrUnavailable, e.reason, e.cause)
}

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// unavailable classifies a transport error into a short, address-free
// reason.
func unavailable(err error) *unavailableError {
	var (
		dnsErr  *net.DNSError
		recErr  tls.RecordHeaderError
		certErr *tls.CertificateVerificationError
		uaErr   x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
	)
	reason := "request failed"
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		reason = "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		reason = "host unreachable"
	case errors.As(err, &dnsErr):
		reason = "host name not resolved"
	case errors.As(err, &recErr), errors.As(err, &certErr), errors.As(err, &uaErr),
		errors.As(err, &hostErr), errors.As(err, &invErr):
		reason = "TLS handshake failed"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		reason = "connection closed"
	}
	return &unavailableError{reason: reason, cause: err}
}

// isTimeout reports a timeout of the transport (http.Client.Timeout, a
// dial or TLS timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

var urlPattern = regexp.MustCompile(`(?i)\b(?:https?|wss?)://\S+`)

// Describe turns an error of this client into a short, readable,
// secret-free sentence for a tool result:
//
//	403: "403: the user lacks the GNS3 permission for this action (<GNS3 message>)"
//	401: "401: GNS3 did not accept the user's credentials"
//	other status: "<code>: <GNS3 message>", or "<code>: <status text>"
//	ErrInvalidID: "invalid <kind> id \"...\" (GNS3 ids are UUIDs)"
//	ErrUnavailable: "GNS3 controller unavailable: <reason>"
//	deadline: "the GNS3 controller did not answer in time"
//	canceled: "cancelled"
//	unknown NodeAction action: "unsupported node action ..."
//
// It never includes the controller URL, the token or the Authorization
// header (URLs inside a GNS3 message are redacted). nil gives "".
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var (
		se  *StatusError
		ide *invalidIDError
		ue  *unavailableError
		ae  *actionError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "the GNS3 controller did not answer in time"
	case errors.As(err, &se):
		code := strconv.Itoa(se.StatusCode)
		msg := urlPattern.ReplaceAllString(se.Message, "<url>")
		switch se.StatusCode {
		case http.StatusUnauthorized:
			return code + ": GNS3 did not accept the user's credentials"
		case http.StatusForbidden:
			s := code + ": the user lacks the GNS3 permission for this action"
			if msg != "" {
				s += " (" + msg + ")"
			}
			return s
		}
		if msg == "" {
			msg = http.StatusText(se.StatusCode)
		}
		if msg == "" {
			msg = "GNS3 error"
		}
		return code + ": " + msg
	case errors.As(err, &ide):
		return fmt.Sprintf("invalid %s id %q (GNS3 ids are UUIDs)", ide.kind, ide.id)
	case errors.Is(err, ErrInvalidID):
		return "invalid id (GNS3 ids are UUIDs)"
	case errors.As(err, &ue):
		return "GNS3 controller unavailable: " + ue.reason
	case errors.Is(err, ErrUnavailable):
		return "GNS3 controller unavailable"
	case errors.As(err, &ae):
		return fmt.Sprintf("unsupported node action %q (want start, stop or suspend)", ae.action)
	}
	return "GNS3 request failed"
}
