package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
)

// The project refusals of GNS3 are Refusals, which the router answers
// without knowing their package.
var _ httpapi.Refusal = (*gns3.ProjectError)(nil)

type checkerFunc func() error

func (f checkerFunc) CheckProject(context.Context, auth.Identity, string) error { return f() }

// teapot is a Refusal of no package the router knows.
type teapot struct{}

func (teapot) Error() string          { return "teapot (internal detail)" }
func (teapot) Refusal() (int, string) { return 418, "I'm a teapot" }

// TestProjectRefusals: a ProjectChecker's Refusal (wrapped or not) is
// answered with its status and public message, anything else is a 500
// that shows no detail.
func TestProjectRefusals(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"gns3 not found", gns3.NotFoundError("p1", errors.New("404 from the controller")), 404, "Project 'p1' not found"},
		{"wrapped", fmt.Errorf("directory: %w", gns3.NotOpenedError("closed")), 403, "opened"},
		{"another package's refusal", teapot{}, 418, "I'm a teapot"},
		{"no refusal", errors.New("directory: connection refused"), 500, "Internal server error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := httpapi.Deps{Auth: fakeAuth{}, Projects: checkerFunc(func() error { return tc.err })}
			rec := serve(d, httptest.NewRequest("GET", "/v3/projects/p1/chat/sessions", nil))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.body) ||
				strings.Contains(rec.Body.String(), "connection refused") || strings.Contains(rec.Body.String(), "internal detail") {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
		})
	}
}

// TestRefusalOf: the StatusError of a Refusal in an error's chain.
func TestRefusalOf(t *testing.T) {
	se, ok := httpapi.RefusalOf(fmt.Errorf("check: %w", gns3.NotFoundError("p2", nil)))
	if !ok || se.Status != 404 || se.Message != "Project 'p2' not found" {
		t.Fatalf("%+v %v", se, ok)
	}
	if se, ok := httpapi.RefusalOf(errors.New("plain")); ok || se != nil {
		t.Fatalf("plain error: %+v %v", se, ok)
	}
}
