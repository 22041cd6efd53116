package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"agentchat/internal/httpapi"
)

// A run cancelled because its client went away is a 499, never a 500:
// it is neither logged as a server failure nor counted as one.
func TestRunFailureOfACancelledRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"cancelled", context.Canceled, httpapi.StatusClientClosed, codeClientClosed},
		{"cancelled, wrapped", fmt.Errorf("take a turn slot: begin write: %w", context.Canceled), httpapi.StatusClientClosed, codeClientClosed},
		{"deadline", context.DeadlineExceeded, http.StatusGatewayTimeout, ""},
		{"unknown", errors.New("boom"), http.StatusInternalServerError, codeAgentError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ae, _ := runFailure(tc.err, "")
			if ae.Status != tc.status || ae.Code != tc.code {
				t.Errorf("runFailure(%v) = %d %q, want %d %q", tc.err, ae.Status, ae.Code, tc.status, tc.code)
			}
		})
	}
}
