package telemetry_test

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"go.opentelemetry.io/otel/propagation"

	"agentchat/internal/httpapi"
	"agentchat/internal/logctx"
	"agentchat/internal/telemetry"
	"agentchat/internal/telemetry/telemetrytest"
)

// newBatching is a provider over the receiver whose batches would wait a
// minute: only a flush exports them within a test.
func newBatching(t *testing.T, env map[string]string) (*telemetrytest.Receiver, *telemetry.Provider) {
	rc := telemetrytest.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "60000")
	for k, v := range env {
		t.Setenv(k, v)
	}
	p, err := telemetry.New(context.Background(), os.Getenv)
	if err != nil || p == nil {
		t.Fatalf("New = %v, %v", p, err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return rc, p
}

func pingRouter(p *telemetry.Provider) http.Handler {
	return httpapi.NewRouter(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Tracer: p.Tracer()},
		httpapi.Route{Method: http.MethodGet, Path: "/v3/ping/{id}", Public: true, Handler: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("pong"))
		}})
}

// TestFlushAfterExportsBeforeReturning: as on AWS Lambda, the request's
// spans are at the collector once the handler returns, without waiting for
// the batch.
func TestFlushAfterExportsBeforeReturning(t *testing.T) {
	rc, p := newBatching(t, nil)
	h := telemetry.FlushAfter(pingRouter(p), p, slog.New(slog.DiscardHandler))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v3/ping/42", nil))
	if spans := rc.Spans(); len(spans) != 1 || spans[0].Name != "GET /v3/ping/{id}" {
		t.Fatalf("exported after the request: %v", names(spans))
	}
}

// TestSamplerFromEnvironment: OTEL_TRACES_SAMPLER is honoured.
func TestSamplerFromEnvironment(t *testing.T) {
	rc, p := newBatching(t, map[string]string{"OTEL_TRACES_SAMPLER": "always_off"})
	h := telemetry.FlushAfter(pingRouter(p), p, slog.New(slog.DiscardHandler))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v3/ping/42", nil))
	if spans := rc.Spans(); len(spans) != 0 {
		t.Fatalf("always_off exported %v", names(spans))
	}
}

// TestServiceNameFromEnvironment: OTEL_SERVICE_NAME overrides agentchat.
func TestServiceNameFromEnvironment(t *testing.T) {
	rc, p := newBatching(t, map[string]string{"OTEL_SERVICE_NAME": "chat-eu", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test"})
	h := telemetry.FlushAfter(pingRouter(p), p, slog.New(slog.DiscardHandler))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v3/ping/42", nil))
	if got := rc.Resource("service.name"); got != "chat-eu" {
		t.Errorf("service.name %q", got)
	}
	if got := rc.Resource("deployment.environment.name"); got != "test" {
		t.Errorf("deployment.environment.name %q", got)
	}
}

// TestOffAllocatesNothing: with tracing off the router is the mux itself
// and the LLM client's traceparent injection allocates nothing.
func TestOffAllocatesNothing(t *testing.T) {
	hdr := http.Header{}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(hdr))
	}); n != 0 || len(hdr) != 0 {
		t.Errorf("injection without a span: %v allocations, header %v", n, hdr)
	}
	var nilP *telemetry.Provider
	if telemetry.FlushAfter(http.NotFoundHandler(), nilP, nil) == nil {
		t.Error("FlushAfter without tracing lost the handler")
	}
}

// TestLogsCarryTraceID: what a handler logs names its request's trace.
func TestLogsCarryTraceID(t *testing.T) {
	rc, p := newBatching(t, nil)
	var got map[string]string
	h := httpapi.NewRouter(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Tracer: p.Tracer()},
		httpapi.Route{Method: http.MethodGet, Path: "/v3/ping/{id}", Public: true, Handler: func(_ http.ResponseWriter, r *http.Request) {
			got = map[string]string{}
			for _, a := range logctx.Attrs(r.Context()) {
				got[a.Key] = a.Value.String()
			}
		}})
	telemetry.FlushAfter(h, p, slog.New(slog.DiscardHandler)).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v3/ping/42", nil))
	spans := rc.Spans()
	if len(spans) != 1 {
		t.Fatalf("spans %v", names(spans))
	}
	if got["trace_id"] != hex.EncodeToString(spans[0].TraceId) || got["span_id"] != hex.EncodeToString(spans[0].SpanId) {
		t.Errorf("log attributes %v, span %x/%x", got, spans[0].TraceId, spans[0].SpanId)
	}
}
