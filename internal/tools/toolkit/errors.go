package toolkit

import (
	"errors"
	"fmt"

	"agentchat/internal/gns3"
)

// ErrNotConfigured is the error of every tool when the server has no GNS3
// controller (no GNS3_URL).
var ErrNotConfigured = errors.New("GNS3 is not configured")

// Error is an error of the tools' own (a node or port not found, a wait
// that ran out), readable and secret-free as it is.
type Error struct{ msg string }

// Error returns the text of e.
func (e *Error) Error() string { return e.msg }

// Errorf formats an Error.
func Errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// Describe is the short, secret-free text of err for a result item: the
// text of an Error, else gns3.Describe(err).
func Describe(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.msg
	}
	return gns3.Describe(err)
}
