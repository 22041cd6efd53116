// Package telemetry sets up OpenTelemetry tracing when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// variable is set: an SDK tracer provider exporting spans over OTLP/HTTP,
// honouring the standard OTEL_* variables (OTEL_SERVICE_NAME, default
// agentchat; OTEL_RESOURCE_ATTRIBUTES; OTEL_TRACES_SAMPLER and its
// argument; OTEL_EXPORTER_OTLP_HEADERS...). Without them nothing is set up
// and the callers add no span at all (a nil *Provider).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is service.name when OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) names none.
const DefaultServiceName = "agentchat"

// ScopeName is the instrumentation scope of agentchat's spans.
const ScopeName = "agentchat"

// CaptureContentEnv is the variable that, when "true", records prompts,
// completions and tool arguments on spans (never secrets).
const CaptureContentEnv = "OTEL_GENAI_CAPTURE_CONTENT"

// Provider is the tracing of a process: its tracer, whether content is
// captured, and the flush and shutdown of its exporter. A nil *Provider is
// tracing off: Tracer returns nil and Flush and Shutdown do nothing.
type Provider struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	content bool
}

// Enabled tells whether getenv sets an OTLP endpoint for traces.
func Enabled(getenv func(string) string) bool {
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != ""
}

// New returns the tracing configured by getenv (os.Getenv in production):
// nil when no OTLP endpoint is set, else a provider exporting over
// OTLP/HTTP (protobuf) in batches, configured by the OTEL_EXPORTER_OTLP_*
// variables of getenv. The SDK's batch processor and sampler read their
// OTEL_BSP_* and OTEL_TRACES_SAMPLER variables from the process
// environment.
func New(ctx context.Context, getenv func(string) string) (*Provider, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	cfg, err := exporterConfigFromEnv(getenv)
	if err != nil {
		return nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	exp := newExporter(cfg)
	res, err := newResource(ctx)
	if err != nil {
		return nil, err
	}
	return NewWithProcessor(sdktrace.NewBatchSpanProcessor(exp), res, getenv(CaptureContentEnv) == "true"), nil
}

// newResource is service.name agentchat overridden by OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES, with the SDK's attributes.
func newResource(ctx context.Context) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	return res, nil
}

// NewWithProcessor returns a provider sending its spans to sp (tests use a
// synchronous processor); the sampler is the SDK's, from OTEL_TRACES_SAMPLER
// (default: parent-based, always on). content says whether prompts,
// completions and tool arguments are recorded.
func NewWithProcessor(sp sdktrace.SpanProcessor, res *resource.Resource, content bool) *Provider {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(sp)}
	if res != nil {
		opts = append(opts, sdktrace.WithResource(res))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Provider{tp: tp, tracer: tp.Tracer(ScopeName), content: content}
}

// Tracer returns the tracer of agentchat's spans, nil when p is nil.
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tracer
}

// CaptureContent tells whether prompts, completions and tool arguments are
// recorded (OTEL_GENAI_CAPTURE_CONTENT=true).
func (p *Provider) CaptureContent() bool { return p != nil && p.content }

// Flush exports the spans ended so far; AWS Lambda calls it before an
// invocation returns, since a frozen environment exports nothing.
func (p *Provider) Flush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.tp.ForceFlush(ctx); err != nil {
		return fmt.Errorf("flush spans: %w", err)
	}
	return nil
}

// Shutdown flushes and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut tracing down: %w", err)
	}
	return nil
}

// Propagator returns the W3C trace context propagator (traceparent,
// tracestate) used on incoming and outgoing requests.
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }
