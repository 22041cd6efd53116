package chat

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"agentchat/internal/httpapi"
)

// A turn whose start was cancelled because its client went away is a
// 499, not an unexplained 500.
func TestStartErrorOfACancelledStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int // 0: not a *httpapi.StatusError (a 500)
	}{
		{"cancelled", fmt.Errorf("take a turn slot: begin write: %w", context.Canceled), httpapi.StatusClientClosed},
		{"unknown", errors.New("boom"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var se *httpapi.StatusError
			got := startError("s1", tc.err)
			switch ok := errors.As(got, &se); {
			case tc.status == 0 && ok:
				t.Errorf("startError(%v) = %d, want a 500", tc.err, se.Status)
			case tc.status != 0 && (!ok || se.Status != tc.status):
				t.Errorf("startError(%v) = %v, want status %d", tc.err, got, tc.status)
			}
		})
	}
}
