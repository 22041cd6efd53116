package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentchat/internal/telemetry"
)

// TestTransport: a GNS3 request gets a client span named by method and
// peer, with its status, whose traceparent reaches the server; neither the
// path, the query nor the Authorization header is recorded.
func TestTransport(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("traceparent")
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	exp := tracetest.NewInMemoryExporter()
	p := telemetry.NewWithProcessor(sdktrace.NewSimpleSpanProcessor(exp), nil, false)
	hc := &http.Client{Transport: telemetry.Transport(nil, p, "gns3")}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, srv.URL+"/v3/projects/project-secret-id?token=query-secret", nil)
	req.Header.Set("Authorization", "Bearer header-secret")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "DELETE gns3" {
		t.Fatalf("spans %v", spans)
	}
	if want := spans[0].SpanContext.SpanID().String(); !strings.Contains(got, want) {
		t.Errorf("traceparent %q does not name the span %s", got, want)
	}
	text := ""
	status := int64(0)
	for _, kv := range spans[0].Attributes {
		text += string(kv.Key) + "=" + kv.Value.String() + " "
		if kv.Key == "http.response.status_code" {
			status = kv.Value.AsInt64()
		}
	}
	if status != http.StatusNotFound {
		t.Errorf("status %d in %s", status, text)
	}
	for _, secret := range []string{"project-secret-id", "query-secret", "header-secret"} {
		if strings.Contains(text, secret) {
			t.Errorf("span records %q: %s", secret, text)
		}
	}
	if telemetry.Transport(http.DefaultTransport, nil, "gns3") != http.DefaultTransport {
		t.Error("Transport wraps with tracing off")
	}
}
