package telemetry

import (
	"compress/gzip"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestExporterConfigFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		endpoint string
		header   string // Authorization expected
		timeout  time.Duration
		gzip     bool
		wantErr  string
	}{
		{name: "base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			endpoint: "http://collector:4318/v1/traces", timeout: DefaultExportTimeout},
		{name: "traces endpoint as it is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/otlp/traces"},
			endpoint: "https://b/otlp/traces", timeout: DefaultExportTimeout},
		{name: "headers percent-decoded, timeout, gzip", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic%20abc%3D, X-Team = lab", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"},
			endpoint: "http://c:4318/v1/traces", header: "Basic abc=", timeout: 2500 * time.Millisecond, gzip: true},
		{name: "trace-specific timeout wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "1", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "7000"},
			endpoint: "http://c/v1/traces", timeout: 7 * time.Second},
		{name: "grpc refused", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantErr: "http/protobuf"},
		{name: "not a URL", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, wantErr: "http:// or https://"},
		{name: "bad header", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, wantErr: "key=value"},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "-3"}, wantErr: "milliseconds"},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, wantErr: "gzip or none"},
		{name: "missing CA file", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, wantErr: "CERTIFICATE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := exporterConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.endpoint != tt.endpoint || cfg.timeout != tt.timeout || cfg.gzip != tt.gzip || cfg.headers.Get("Authorization") != tt.header {
				t.Errorf("config = %+v", cfg)
			}
		})
	}
}

// testSpans are two spans of one resource in two scopes, with every
// attribute type, an event, a link, a remote parent and both error and ok
// statuses.
func testSpans() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	res := resource.NewSchemaless(attribute.String("service.name", "agentchat"))
	start := time.Unix(1_700_000_000, 123)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}, Remote: true, TraceFlags: trace.FlagsSampled})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{7}, TraceFlags: trace.FlagsSampled})
	return tracetest.SpanStubs{
		{
			Name: "POST /stream", SpanKind: trace.SpanKindServer, Resource: res,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}),
			Parent:      parent, StartTime: start, EndTime: start.Add(time.Second),
			Attributes: []attribute.KeyValue{
				attribute.String("s", "v"), attribute.String("empty", ""), attribute.Bool("f", false), attribute.Int64("zero", 0),
				attribute.Int64("neg", -5), attribute.Float64("pi", math.Pi), attribute.StringSlice("ss", []string{"a", "b"}),
				attribute.Int64Slice("is", []int64{1, -2}), attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{true, false}),
			},
			Events:            []sdktrace.Event{{Name: "gen_ai.first_token", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("n", 1)}}},
			Links:             []sdktrace.Link{{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "retry")}}},
			Status:            sdktrace.Status{Code: codes.Error, Description: "boom"},
			DroppedAttributes: 2, DroppedEvents: 3, DroppedLinks: 4,
			InstrumentationScope: instrumentation.Scope{Name: "agentchat", Version: "1"},
		},
		{
			Name: "chat m", SpanKind: trace.SpanKindClient, Resource: res,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}),
			Parent:      trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}}),
			StartTime:   start, EndTime: start.Add(2 * time.Second),
			Status:               sdktrace.Status{Code: codes.Ok},
			InstrumentationScope: instrumentation.Scope{Name: "other"},
		},
	}.Snapshots()
}

func TestEncodeTracesDecodesWithTheOTLPTypes(t *testing.T) {
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(encodeTraces(testSpans()), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 2 {
		t.Fatalf("grouping: %v", &req)
	}
	rs := req.ResourceSpans[0]
	if got := rs.Resource.Attributes[0]; got.Key != "service.name" || got.Value.GetStringValue() != "agentchat" {
		t.Errorf("resource = %v", rs.Resource)
	}
	ss := rs.ScopeSpans[0]
	if ss.Scope.Name != "agentchat" || ss.Scope.Version != "1" || rs.ScopeSpans[1].Scope.Name != "other" {
		t.Errorf("scopes = %v, %v", ss.Scope, rs.ScopeSpans[1].Scope)
	}
	s := ss.Spans[0]
	want := &tracepb.Span{
		TraceId: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanId: []byte{1, 0, 0, 0, 0, 0, 0, 0},
		ParentSpanId: []byte{9, 9, 9, 9, 9, 9, 9, 9}, Name: "POST /stream", Kind: tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: 1_700_000_000_000_000_123, EndTimeUnixNano: 1_700_000_001_000_000_123,
		Flags:                  0x1 | 0x100 | 0x200,
		DroppedAttributesCount: 2, DroppedEventsCount: 3, DroppedLinksCount: 4,
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
		Attributes: []*commonpb.KeyValue{
			kv("s", &commonpb.AnyValue_StringValue{StringValue: "v"}), kv("empty", &commonpb.AnyValue_StringValue{}),
			kv("f", &commonpb.AnyValue_BoolValue{}), kv("zero", &commonpb.AnyValue_IntValue{}),
			kv("neg", &commonpb.AnyValue_IntValue{IntValue: -5}), kv("pi", &commonpb.AnyValue_DoubleValue{DoubleValue: math.Pi}),
			kv("ss", arr(&commonpb.AnyValue_StringValue{StringValue: "a"}, &commonpb.AnyValue_StringValue{StringValue: "b"})),
			kv("is", arr(&commonpb.AnyValue_IntValue{IntValue: 1}, &commonpb.AnyValue_IntValue{IntValue: -2})),
			kv("fs", arr(&commonpb.AnyValue_DoubleValue{DoubleValue: 0.5})),
			kv("bs", arr(&commonpb.AnyValue_BoolValue{BoolValue: true}, &commonpb.AnyValue_BoolValue{})),
		},
		Events: []*tracepb.Span_Event{{Name: "gen_ai.first_token", TimeUnixNano: 1_700_000_000_001_000_123,
			Attributes: []*commonpb.KeyValue{kv("n", &commonpb.AnyValue_IntValue{IntValue: 1})}}},
		Links: []*tracepb.Span_Link{{TraceId: []byte{7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, SpanId: []byte{7, 0, 0, 0, 0, 0, 0, 0},
			Attributes: []*commonpb.KeyValue{kv("why", &commonpb.AnyValue_StringValue{StringValue: "retry"})}, Flags: 0x1 | 0x100}},
	}
	if !proto.Equal(s, want) {
		t.Errorf("span =\n%v\nwant\n%v", s, want)
	}
	c := rs.ScopeSpans[1].Spans[0]
	if c.Kind != tracepb.Span_SPAN_KIND_CLIENT || c.Status.GetCode() != tracepb.Status_STATUS_CODE_OK || c.Flags != 0x1|0x100 || string(c.ParentSpanId) != string(s.SpanId) {
		t.Errorf("client span = %v", c)
	}
}

func kv(k string, v any) *commonpb.KeyValue {
	var av commonpb.AnyValue
	switch x := v.(type) {
	case *commonpb.AnyValue_StringValue:
		av.Value = x
	case *commonpb.AnyValue_BoolValue:
		av.Value = x
	case *commonpb.AnyValue_IntValue:
		av.Value = x
	case *commonpb.AnyValue_DoubleValue:
		av.Value = x
	case *commonpb.AnyValue_ArrayValue:
		av.Value = x
	}
	return &commonpb.KeyValue{Key: k, Value: &av}
}

func arr(vs ...any) *commonpb.AnyValue_ArrayValue {
	out := &commonpb.ArrayValue{}
	for _, v := range vs {
		out.Values = append(out.Values, kv("", v).Value)
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: out}
}

func TestExporterSends(t *testing.T) {
	tests := []struct {
		name    string
		answers []int // status of each successive answer; the last repeats
		gzip    bool
		wantErr string
		posts   int32
	}{
		{name: "accepted", answers: []int{200}, posts: 1},
		{name: "gzip", answers: []int{200}, gzip: true, posts: 1},
		{name: "unavailable then accepted", answers: []int{503, 429, 200}, posts: 3},
		{name: "bad request not retried", answers: []int{400}, wantErr: "400", posts: 1},
		{name: "redirect not followed", answers: []int{307}, wantErr: "307", posts: 1},
		{name: "gives up after the attempts", answers: []int{502}, wantErr: "502", posts: maxExportAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(posts.Add(1))
				body := io.Reader(r.Body)
				if tt.gzip {
					if r.Header.Get("Content-Encoding") != "gzip" {
						t.Error("no Content-Encoding: gzip")
					}
					zr, err := gzip.NewReader(r.Body)
					if err != nil {
						t.Fatal(err)
					}
					body = zr
				}
				raw, _ := io.ReadAll(body)
				var req coltracepb.ExportTraceServiceRequest
				if err := proto.Unmarshal(raw, &req); err != nil || len(req.ResourceSpans) != 1 {
					t.Errorf("undecodable export (%v)", err)
				}
				if r.Header.Get("Authorization") != "Bearer t" || r.Header.Get("Content-Type") != "application/x-protobuf" {
					t.Errorf("headers = %v", r.Header)
				}
				status := tt.answers[min(n, len(tt.answers))-1]
				if status == 307 {
					w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
				}
				w.WriteHeader(status)
			}))
			defer srv.Close()
			e := newExporter(exporterConfig{endpoint: srv.URL + "/v1/traces", headers: http.Header{"Authorization": {"Bearer t"}}, timeout: 5 * time.Second, gzip: tt.gzip})
			err := e.ExportSpans(context.Background(), testSpans())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if posts.Load() != tt.posts {
				t.Errorf("posts = %d, want %d", posts.Load(), tt.posts)
			}
		})
	}
}

// An endpoint answering without end is read only up to maxResponseBytes.
func TestExporterBoundsTheAnswer(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for written.Load() < 150<<20 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			written.Add(int64(len(chunk)))
		}
	}))
	defer srv.Close()
	e := newExporter(exporterConfig{endpoint: srv.URL, headers: http.Header{}, timeout: 30 * time.Second})
	if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections()
	if written.Load() >= 150<<20 {
		t.Errorf("the exporter read the whole 150 MB answer")
	}
}

// A cancelled export stops retrying and says why.
func TestExporterStopsWithItsContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	e := newExporter(exporterConfig{endpoint: srv.URL, headers: http.Header{}, timeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the first answer has asked to wait an hour.
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	err := e.ExportSpans(ctx, testSpans())
	if err == nil || !strings.Contains(err.Error(), "canceled") || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v", err)
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Errorf("export after shutdown: %v", err)
	}
}
