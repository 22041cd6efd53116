package agent

import (
	"context"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// endToolSpan ends a tool call's span with its output and whether it
// failed.
type endToolSpan func(out string, failed bool)

// noToolSpan is the end of a span never started (tracing off).
func noToolSpan(string, bool) {}

// startToolSpan starts the span of one tool call ("execute_tool {name}",
// gen_ai.tool.name, gen_ai.tool.call.id) when Options.Tracer is set; the
// arguments and output are recorded only with Options.TraceContent. With
// tracing off it returns ctx and a no-op.
//
// With Options.Metrics set, the call is counted by tool and status.
func (rt *Runtime) startToolSpan(ctx context.Context, call openai.ToolCall) (context.Context, endToolSpan) {
	tr, m := rt.o.Tracer, rt.o.Metrics
	if tr == nil {
		if m == nil {
			return ctx, noToolSpan
		}
		return ctx, func(_ string, failed bool) { m.ToolCall(call.Function.Name, failed) }
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", call.Function.Name),
		attribute.String("gen_ai.tool.call.id", call.ID),
	}
	if rt.o.TraceContent {
		attrs = append(attrs, attribute.String("gen_ai.tool.call.arguments", call.Function.Arguments))
	}
	ctx, span := tr.Start(ctx, "execute_tool "+call.Function.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(out string, failed bool) {
		m.ToolCall(call.Function.Name, failed)
		if rt.o.TraceContent {
			span.SetAttributes(attribute.String("gen_ai.tool.call.result", out))
		}
		if failed {
			span.SetAttributes(attribute.String("error.type", "tool_error"))
			span.SetStatus(codes.Error, "tool call failed")
		}
		span.End()
	}
}
