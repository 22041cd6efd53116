package localserver

import (
	"net/http"
	"time"
)

// Bounds on how long the local server waits for a client.
const (
	// ReadHeaderTimeout bounds reading a request's line and headers (a
	// slowloris client trickling them).
	ReadHeaderTimeout = 10 * time.Second
	// BodyReadTimeout bounds reading a whole request, body included,
	// counted from its first byte: a client that declares a body and does
	// not send it (or trickles it) gets a 408 and its connection is closed
	// then. Bodies are at most 1 MiB (httpapi.MaxBodyBytes), so this asks
	// for about 35 KB/s at worst.
	BodyReadTimeout = 30 * time.Second
	// IdleTimeout bounds a keep-alive connection waiting for its next
	// request.
	IdleTimeout = 120 * time.Second
)

// Timeouts are the local server's bounds on its clients.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Body bounds reading a whole request, body included (<= 0: no
	// bound).
	Body time.Duration
	// Idle bounds a keep-alive connection between requests.
	Idle time.Duration
}

// DefaultTimeouts returns ReadHeaderTimeout, BodyReadTimeout and
// IdleTimeout.
func DefaultTimeouts() Timeouts {
	return Timeouts{ReadHeader: ReadHeaderTimeout, Body: BodyReadTimeout, Idle: IdleTimeout}
}

// newHTTPServer returns the server of handler with timeouts t.
//
// The body is bounded by ReadTimeout: a read past it fails with an error
// matching os.ErrDeadlineExceeded (httpapi.DecodeJSON answers 408) and
// net/http closes the connection. net/http lifts that read deadline once
// the body has been read to its end (or at once for a request without
// one), so a response that lasts longer, an SSE stream of minutes, is not
// cut by it. There is no WriteTimeout: it would cut those streams.
// Authentication runs before any handler reads the body (httpapi's
// router), so a caller without a credential is refused without waiting
// for it.
func newHTTPServer(handler http.Handler, t Timeouts) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       max(t.Body, 0),
		IdleTimeout:       t.Idle,
	}
}
