package llm

import (
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
// HTTP/1.1.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: newTransport()}
}

func newTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
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
