// Package telemetrytest is an in-test OTLP/HTTP trace receiver: an
// httptest server decoding the protobuf export requests of the real
// exporter (go.opentelemetry.io/proto/otlp).
package telemetrytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver collects the spans exported to it.
type Receiver struct {
	// URL is the base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT.
	URL      string
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource []*commonpb.KeyValue
}

// NewReceiver starts a receiver, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	rc := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected export", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		rc.resource = rs.Resource.GetAttributes()
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans returns the spans received so far.
func (rc *Receiver) Spans() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

// Resource returns the string value of a resource attribute of the last
// export ("" when absent).
func (rc *Receiver) Resource(key string) string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, kv := range rc.resource {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// Attr returns the value of a span attribute, nil when absent.
func Attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// Text is everything a span exports as text (name, status message,
// attributes, events), for checks that a secret is not in it.
func Text(s *tracepb.Span) string {
	text := s.Name + " " + s.Status.GetMessage()
	for _, kv := range s.Attributes {
		text += " " + kv.Key + "=" + kv.Value.String()
	}
	for _, e := range s.Events {
		text += " " + e.Name
		for _, kv := range e.Attributes {
			text += " " + kv.Key + "=" + kv.Value.String()
		}
	}
	return text
}
