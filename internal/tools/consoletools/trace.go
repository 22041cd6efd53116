package consoletools

import (
	"context"
	"net"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/telemetry"
	"agentchat/internal/tools/toolkit"
)

// spanName is the name of a device's console span by kind.
var spanName = map[kind]string{kindShow: "console exec", kindConfig: "console configure", kindVPCS: "console vpcs"}

// traceDevice starts the client span of one device's console session
// ("console exec", "console configure" or "console vpcs") as a child of
// the span in ctx (the tool call's), with that span's tracer provider:
// with tracing off there is no span in ctx and the span returned is a
// no-op, at no cost. The span names the node, its device type and the
// console's address, and counts the commands sent and refused; never the
// commands themselves or the output.
func traceDevice(ctx context.Context, k kind, p *plan) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	attrs := []attribute.KeyValue{
		attribute.String("gns3.node.name", p.node.Name),
		attribute.String("gns3.node.device_type", p.typ.Name),
		attribute.Int("agentchat.console.commands", len(p.exec)+len(p.steps)),
		attribute.Int("agentchat.console.refused", len(p.blocked)),
	}
	if host, port, err := net.SplitHostPort(p.addr); err == nil {
		attrs = append(attrs, attribute.String("server.address", host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	return parent.TracerProvider().Tracer(telemetry.ScopeName).Start(ctx, spanName[k],
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endDevice ends a device's console span with the result's status, an
// error status when the device failed.
func endDevice(span trace.Span, it *deviceResult) {
	span.SetAttributes(attribute.String("agentchat.console.status", it.Status))
	if it.Status == toolkit.StatusFailed {
		span.SetAttributes(attribute.String("error.type", "console_error"))
		span.SetStatus(codes.Error, "console commands failed")
	}
	span.End()
}
