package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi"
)

func TestHandlerFuncRendersItsError(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   string
		wantRetry  string
	}{
		{"nil writes nothing more", nil, http.StatusNoContent, "", ""},
		{"status error as it is", httpapi.Errorf(http.StatusConflict, "session busy"), http.StatusConflict, `{"message":"session busy"}`, ""},
		{"wrapped status error", errorsJoin(httpapi.Errorf(http.StatusNotFound, "no such session")), http.StatusNotFound, `{"message":"no such session"}`, ""},
		{"retry after", &httpapi.StatusError{Status: http.StatusTooManyRequests, Message: "slow down", RetryAfter: 1500 * time.Millisecond}, http.StatusTooManyRequests, `{"message":"slow down"}`, "2"},
		{"anything else is a 500 without details", errors.New("db password wrong"), http.StatusInternalServerError, `{"message":"Internal server error"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := httpapi.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				if c.err == nil {
					w.WriteHeader(http.StatusNoContent)
				}
				return c.err
			})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
			if rec.Code != c.wantStatus || strings.TrimSpace(rec.Body.String()) != c.wantBody || rec.Header().Get("Retry-After") != c.wantRetry {
				t.Fatalf("got %d %q Retry-After %q", rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"))
			}
		})
	}
}

func errorsJoin(err error) error { return errors.Join(errors.New("loading"), err) }
