package telemetry

import (
	"context"
	"errors"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport returns next (nil: http.DefaultTransport) with a client span
// per request when p is set, for the calls to the GNS3 controller: named
// by the method and peer ("GET gns3"), with http.request.method,
// server.address, server.port and http.response.status_code; the request
// carries its traceparent. Neither the URL's path or query nor any header
// is recorded. With a nil p it returns next as it is.
func Transport(next http.RoundTripper, p *Provider, peer string) http.RoundTripper {
	if p == nil {
		return next
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return tracedTransport{next: next, p: p, peer: peer}
}

type tracedTransport struct {
	next http.RoundTripper
	p    *Provider
	peer string
}

// RoundTrip sends req within its span.
func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	ctx, span := t.p.Tracer().Start(req.Context(), method+" "+t.peer, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", method),
			attribute.String("server.address", req.URL.Hostname()),
		))
	if port := req.URL.Port(); port != "" {
		span.SetAttributes(attribute.String("server.port", port))
	}
	defer span.End()
	req = req.Clone(ctx)
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.next.RoundTrip(req)
	endClientCall(span, resp, err)
	return resp, err
}

// endClientCall records the outcome of a client span's HTTP call: the
// error's type, or the answer's status (an error status from 400 on).
func endClientCall(span trace.Span, resp *http.Response, err error) {
	if err != nil {
		span.SetAttributes(attribute.String("error.type", ErrorType(err)))
		span.SetStatus(codes.Error, "request failed")
		return
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, "")
	}
}

// ErrorType is the error.type attribute of a failed call: canceled,
// deadline_exceeded or _OTHER, never the error's message (which may quote
// a server or carry a URL).
func ErrorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	return "_OTHER"
}
