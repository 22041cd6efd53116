package lambdaapp_test

import (
	"net/http"
	"testing"

	"agentchat/internal/httpapi"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/telemetry/telemetrytest"
)

// TestSpansFlushedPerInvocation: with OTEL_EXPORTER_OTLP_ENDPOINT set and
// batches that would wait a minute, the spans of an invocation, API or
// streamed, are at the collector when it returns (a frozen environment
// would never send them).
func TestSpansFlushedPerInvocation(t *testing.T) {
	rc := telemetrytest.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "60000")
	items := route(http.MethodGet, "/items/{id}", httpapi.StyleGNS3, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("data: one\n\n"))
	})
	api := lambdatest.New(t, endpoint, testFunc(lambdaapp.API, items), nil)
	if resp := api.API("GET /items/{id}", "/items/42", nil, ""); resp.Status != http.StatusOK {
		t.Fatalf("api status %d", resp.Status)
	}
	if spans := rc.Spans(); len(spans) != 1 || spans[0].Name != "GET /items/{id}" {
		t.Fatalf("after the API invocation: %d spans", len(spans))
	}
	stream := lambdatest.New(t, endpoint, testFunc(lambdaapp.Stream, items), nil)
	if resp := stream.Stream(http.MethodGet, "/items/43", nil, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status %d", resp.StatusCode)
	}
	if spans := rc.Spans(); len(spans) != 2 || spans[1].Name != "GET /items/{id}" {
		t.Fatalf("after the streamed invocation: %d spans", len(spans))
	}
}
