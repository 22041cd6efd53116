package console

import (
	"errors"
	"fmt"
)

// Errors of a session. Their texts are written for a tool result.
var (
	// ErrTimeout means the device did not show a prompt in time.
	ErrTimeout = errors.New("the device did not answer in time")
	// ErrClosed means the console connection was closed (by the device,
	// or because the context ended).
	ErrClosed = errors.New("the console connection was closed")
	// ErrLogin means the console asks for a user name or a password:
	// only the unauthenticated consoles of GNS3 are supported.
	ErrLogin = errors.New("the console asks for a login, which is not supported (GNS3 consoles are unauthenticated)")
	// ErrEnablePassword means enable asks for a password.
	ErrEnablePassword = errors.New("enable asks for a password, which is not supported")
	// ErrNoConfigMode means the device type has no configuration mode.
	ErrNoConfigMode = errors.New("the device has no configuration mode")
	// ErrNotRun is the error of a command not sent because the session
	// failed before it.
	ErrNotRun = errors.New("not run")
)

// CommandError is a command the device refused or could not complete: its
// error line ("% Invalid input detected at '^' marker.") or the question
// it asked.
type CommandError struct {
	Message string
}

func (e *CommandError) Error() string { return e.Message }

// notRun is the error of a command skipped because of cause.
func notRun(cause error) error {
	return fmt.Errorf("%w: %w", ErrNotRun, cause)
}
