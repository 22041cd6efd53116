package benche2e

import (
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// maxProxyBody bounds the request body the proxy buffers.
const maxProxyBody = 8 << 20

// NewProxy returns the bare reverse proxy the benchmark compares agentchat
// with: httputil.ReverseProxy to upstream, flushing every write at once
// (FlushInterval -1), over a transport with a large idle pool so that
// concurrent streams reuse their upstream connections.
//
// The proxy reads the request body whole before forwarding it (as nginx
// does by default, and as agentchat does to decode it): net/http's HTTP/1
// server closes an unread request body when the response starts, and the
// transport, which reads once more past Content-Length to check the
// length, then fails the request and cuts the answer already streaming
// (golang/go#40747), a few times per thousand streams here.
func NewProxy(upstream *url.URL, errLog *log.Logger) http.Handler {
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream) // also the Host header
		},
		FlushInterval: -1,
		Transport:     tr,
		ErrorLog:      errLog,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxProxyBody+1))
			if err != nil || len(body) > maxProxyBody {
				http.Error(w, "bad request body", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		rp.ServeHTTP(w, r)
	})
}
