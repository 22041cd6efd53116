package gns3_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"agentchat/internal/gns3"
)

// recorder is a server that records the Authorization of every request.
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newRecorder(t *testing.T, tls bool, h http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		h(w, req)
	})
	if tls {
		r.Server = httptest.NewTLSServer(wrapped)
	} else {
		r.Server = httptest.NewServer(wrapped)
	}
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auths...)
}

// TestRedirectsStayWithinTheController: a redirect to another origin (a
// host or port of the attacker's, or HTTPS to HTTP) is not followed and
// the other origin sees no request, so that the user's token never goes
// there; a redirect within the controller's origin is followed.
func TestRedirectsStayWithinTheController(t *testing.T) {
	const projectID = "11111111-2222-3333-4444-555555555555"
	elsewhere := newRecorder(t, false, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"project_id":"` + projectID + `","name":"stolen"}`))
	})
	tests := []struct {
		name string
		tls  bool
		to   func(self string) string // the Location, given the controller's URL
		ok   bool
	}{
		{name: "another port", to: func(string) string { return elsewhere.URL + "/v3/projects/" + projectID }},
		{name: "another host name", to: func(self string) string {
			return strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1) + "/v3/projects/" + projectID
		}},
		{name: "HTTPS to HTTP", tls: true, to: func(string) string { return elsewhere.URL + "/v3/projects/" + projectID }},
		{name: "HTTPS to HTTP on the same host and port", tls: true, to: func(self string) string {
			return strings.Replace(self, "https://", "http://", 1) + "/moved/v3/projects/" + projectID
		}},
		{name: "same origin", ok: true, to: func(self string) string { return self + "/moved/v3/projects/" + projectID }},
		{name: "same origin over HTTPS", tls: true, ok: true, to: func(self string) string { return self + "/moved/v3/projects/" + projectID }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(elsewhere.requests())
			var ctrl *recorder
			ctrl = newRecorder(t, tt.tls, func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/moved/") {
					_, _ = w.Write([]byte(`{"project_id":"` + projectID + `","name":"lab"}`))
					return
				}
				http.Redirect(w, r, tt.to(ctrl.URL), http.StatusTemporaryRedirect)
			})
			// The caller's client would follow anything; the gns3 client
			// must not.
			c, err := gns3.New(ctrl.URL, ctrl.Client())
			if err != nil {
				t.Fatal(err)
			}
			p, err := c.GetProject(context.Background(), tokAlice, projectID)
			if tt.ok {
				if err != nil || p.Name != "lab" {
					t.Fatalf("project %+v, %v", p, err)
				}
				for _, a := range ctrl.requests() {
					if a != "Bearer "+tokAlice {
						t.Fatalf("the controller got Authorization %q", a)
					}
				}
				return
			}
			if !errors.Is(err, gns3.ErrRedirect) || !errors.Is(err, gns3.ErrUnavailable) || strings.Contains(err.Error(), tokAlice) {
				t.Fatalf("error %v, want ErrRedirect", err)
			}
			if n := len(elsewhere.requests()) - before; n != 0 {
				t.Fatalf("the other origin got %d requests", n)
			}
			if n := len(ctrl.requests()); n != 1 {
				t.Fatalf("the controller got %d requests, want the one redirected", n)
			}
		})
	}
}
