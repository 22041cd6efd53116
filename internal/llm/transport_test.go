package llm_test

import (
	"net/http"
	"testing"

	"agentchat/internal/llm"
)

func TestNewHTTPClientSettings(t *testing.T) {
	hc := llm.NewHTTPClient()
	if hc.Timeout != 0 {
		t.Errorf("client timeout %v: it would cut long streams", hc.Timeout)
	}
	tr, ok := hc.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", hc.Transport)
	}
	if tr == http.DefaultTransport {
		t.Error("the client shares http.DefaultTransport")
	}
	if tr.MaxIdleConnsPerHost < 64 || tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("idle pool %d per host, %d in all: want ≥ 64 per host", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
	if tr.ResponseHeaderTimeout != 0 {
		t.Errorf("ResponseHeaderTimeout %v would cut slow non-streamed answers", tr.ResponseHeaderTimeout)
	}
	if tr.IdleConnTimeout <= 0 || tr.TLSHandshakeTimeout <= 0 || tr.DialContext == nil {
		t.Error("idle, TLS handshake or dial timeouts missing")
	}
	if llm.NewHTTPClient().Transport == hc.Transport {
		t.Error("two clients share one transport")
	}
}

// TestGuardedHTTPClientSettings: the users' pool has the same settings but
// no proxy (a proxy would connect out of the guard's reach); neither pool
// follows redirects.
func TestGuardedHTTPClientSettings(t *testing.T) {
	trusted, guarded := llm.NewHTTPClient(), llm.NewGuardedHTTPClient(llm.Guard{})
	tt, gt := trusted.Transport.(*http.Transport), guarded.Transport.(*http.Transport)
	if gt.Proxy != nil || tt.Proxy == nil {
		t.Error("the guarded transport uses a proxy, or the trusted one none")
	}
	if gt == tt || gt.MaxIdleConnsPerHost != tt.MaxIdleConnsPerHost || gt.DialContext == nil {
		t.Error("the guarded transport is not a pool of its own with the same settings")
	}
	for _, hc := range []*http.Client{trusted, guarded} {
		if hc.CheckRedirect == nil || hc.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
			t.Error("a client follows redirects")
		}
	}
}
