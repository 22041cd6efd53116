package telemetry_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentchat/internal/httpapi"
	"agentchat/internal/telemetry"
)

// BenchmarkRouter compares the request path with tracing off (no tracer:
// the router is the one without telemetry) and on (a span per request to
// an in-memory exporter); off must report the allocations of a router
// built before tracing existed.
func BenchmarkRouter(b *testing.B) {
	on := telemetry.NewWithProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter()), nil, false)
	for _, bc := range []struct {
		name string
		p    *telemetry.Provider
	}{{"off", nil}, {"on", on}} {
		b.Run(bc.name, func(b *testing.B) {
			h := httpapi.NewRouter(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Tracer: bc.p.Tracer()},
				httpapi.Route{Method: http.MethodGet, Path: "/v3/ping/{id}", Public: true, Handler: func(w http.ResponseWriter, _ *http.Request) {}})
			req := httptest.NewRequest(http.MethodGet, "/v3/ping/42", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
