package telemetry

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Doer sends an HTTP request: *http.Client and the AWS SDK's HTTP clients
// are Doers.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// AWSClient returns next with a client span per request of an AWS JSON
// protocol service (DynamoDB), made under the span of the request's
// context with that span's tracer provider: with tracing off, or for a
// call made outside any span, the request goes as it is, unobserved. The
// span is named "{service}.{operation}" (the operation from the
// X-Amz-Target header) with rpc.system aws-api, rpc.service, rpc.method
// and the answer's status; no key, item, header or body is recorded, and
// no traceparent is added (the request is already signed).
func AWSClient(next Doer, service string) Doer {
	return awsClient{next: next, service: service}
}

type awsClient struct {
	next    Doer
	service string
}

// Do sends req within its span when its context is traced.
func (c awsClient) Do(req *http.Request) (*http.Response, error) {
	parent := trace.SpanFromContext(req.Context())
	if !parent.IsRecording() {
		return c.next.Do(req)
	}
	op := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	name := c.service
	if op != "" {
		name += "." + op
	}
	_, span := parent.TracerProvider().Tracer(ScopeName).Start(req.Context(), name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("rpc.system", "aws-api"),
			attribute.String("rpc.service", c.service),
			attribute.String("rpc.method", op),
			attribute.String("server.address", req.URL.Hostname()),
		))
	defer span.End()
	resp, err := c.next.Do(req)
	endClientCall(span, resp, err)
	return resp, err
}
