package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/telemetry"
)

// doerFunc is a Doer answering with a function.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

func TestAWSClientSpans(t *testing.T) {
	cases := []struct {
		name     string
		traced   bool
		target   string
		status   int
		err      error
		wantSpan string
		wantErr  bool
	}{
		{"untraced call goes as it is", false, "DynamoDB_20120810.GetItem", 200, nil, "", false},
		{"traced call", true, "DynamoDB_20120810.GetItem", 200, nil, "DynamoDB.GetItem", false},
		{"refused call", true, "DynamoDB_20120810.PutItem", 400, nil, "DynamoDB.PutItem", true},
		{"failed call", true, "DynamoDB_20120810.Query", 0, errors.New("connection refused"), "DynamoDB.Query", true},
		{"no target", true, "", 200, nil, "DynamoDB", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			ctx := context.Background()
			var parent trace.Span
			if c.traced {
				ctx, parent = tp.Tracer("test").Start(ctx, "request")
			}
			var sawTraceparent bool
			client := telemetry.AWSClient(doerFunc(func(r *http.Request) (*http.Response, error) {
				sawTraceparent = r.Header.Get("Traceparent") != ""
				if c.err != nil {
					return nil, c.err
				}
				return &http.Response{StatusCode: c.status, Body: http.NoBody}, nil
			}), "DynamoDB")
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:8000/", strings.NewReader(`{"TableName":"t","Key":{"secret":{"S":"x"}}}`))
			req.Header.Set("X-Amz-Target", c.target)
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSECRET")
			_, err := client.Do(req)
			if (err != nil) != (c.err != nil) || sawTraceparent {
				t.Fatalf("err %v, traceparent added %v", err, sawTraceparent)
			}
			if parent != nil {
				parent.End()
			}
			var got []tracetest.SpanStub
			for _, s := range exp.GetSpans() {
				if s.Name != "request" {
					got = append(got, s)
				}
			}
			if c.wantSpan == "" {
				if len(got) != 0 {
					t.Fatalf("spans without tracing: %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Name != c.wantSpan || got[0].SpanKind != trace.SpanKindClient || got[0].Parent.SpanID() != parent.SpanContext().SpanID() {
				t.Fatalf("spans %v", got)
			}
			if (got[0].Status.Code == codes.Error) != c.wantErr {
				t.Errorf("status %v", got[0].Status)
			}
			for _, kv := range got[0].Attributes {
				if v := kv.Value.String(); strings.Contains(v, "secret") || strings.Contains(v, "AKID") {
					t.Errorf("%s records %q", kv.Key, v)
				}
			}
		})
	}
}
