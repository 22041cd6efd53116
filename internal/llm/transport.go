package llm

import (
	"errors"
	"net"
	"net/http"
	"time"
)

// Settings of NewHTTPClient's transport.
const (
	// MaxIdleConnsPerHost is how many idle connections to one LLM server
	// are kept for reuse: at least as many as the streams a process runs
	// at once, so that concurrent streams do not dial anew each time (the
	// default transport keeps 2).
	MaxIdleConnsPerHost = 128
	// MaxIdleConns bounds the idle connections over all LLM servers.
	MaxIdleConns = 512
	// IdleConnTimeout is how long an idle connection is kept.
	IdleConnTimeout = 90 * time.Second
)

// NewHTTPClient returns the HTTP client for LLM calls: a transport of its
// own with an idle pool sized for many concurrent streams (see
// MaxIdleConnsPerHost) and no timeout of its own. Neither the client nor
// the transport bounds the response: a streamed answer lasts as long as
// the model writes and a non-streamed one sends its headers only once the
// whole answer is ready, so the call's own bounds (Config.CallTimeout
// until the first token, Config.IdleTimeout between chunks after it) and
// the caller's context are the only ones; only connecting and the TLS
// handshake have their own.
// HTTPS servers get HTTP/2 as with the default transport; plain http:// is
// HTTP/1.1. Redirects are not followed (see errRedirect). The proxy of the
// environment (HTTPS_PROXY...) is used.
//
// This client connects wherever its URL says: it is for the server-wide
// configuration (OPENAI_BASE_URL), which the operator set. A user's
// configuration goes through NewGuardedHTTPClient.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: newTransport(nil), CheckRedirect: refuseRedirect}
}

// NewGuardedHTTPClient is NewHTTPClient for the configurations of users:
// every connection is checked by g when it is made, on the address
// actually dialled (see Guard). It uses no proxy: through one, the proxy
// would resolve and connect to the host, out of the guard's reach.
func NewGuardedHTTPClient(g Guard) *http.Client {
	return &http.Client{Transport: newTransport(&g), CheckRedirect: refuseRedirect}
}

// errRedirect is what the HTTP client of an LLM client answers a redirect
// with: it is not followed (a model server has no reason to send one, and
// following it could reach a host the base URL does not name).
var errRedirect = errors.New("redirect not followed")

// refuseRedirect makes an http.Client return a redirect's response instead
// of following it; the client turns it into an error (doer.Do).
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// newTransport returns the transport of NewHTTPClient, dialling through g
// and without proxy when g is not nil.
func newTransport(g *Guard) *http.Transport {
	d := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
	}
	proxy := http.ProxyFromEnvironment
	dial := d.DialContext
	if g != nil {
		d.ControlContext = g.control
		proxy = nil
		dial = g.dialContext(d)
	}
	return &http.Transport{
		Proxy:       proxy,
		DialContext: dial,
		// With a DialContext of its own a transport only tries HTTP/2 when
		// asked to; the default transport does, so this one does too.
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          MaxIdleConns,
		MaxIdleConnsPerHost:   MaxIdleConnsPerHost,
		IdleConnTimeout:       IdleConnTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// ResponseHeaderTimeout stays 0: see NewHTTPClient.
	}
}
