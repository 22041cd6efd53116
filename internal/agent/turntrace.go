package agent

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// noTurnSpan is the end of a turn span never started (tracing off).
func noTurnSpan() {}

// traceTurn starts the span of a turn ("invoke_agent {agent}",
// gen_ai.operation.name invoke_agent, gen_ai.agent.id, and
// gen_ai.conversation.id the session when there is one: a stateless /v1
// run has none) when Options.Tracer is set, and
// returns the context of the turn's calls, emit watching for the turn's
// error (status Error, error.type turn_error; the message is not
// recorded) and the span's end. With tracing off it returns its arguments
// and a no-op.
func (rt *Runtime) traceTurn(ctx context.Context, agentID, conversationID string, emit func(Event)) (context.Context, func(Event), func()) {
	tr := rt.o.Tracer
	if tr == nil {
		return ctx, emit, noTurnSpan
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.id", agentID),
	}
	if conversationID != "" {
		attrs = append(attrs, attribute.String("gen_ai.conversation.id", conversationID))
	}
	ctx, span := tr.Start(ctx, "invoke_agent "+agentID, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(e Event) {
		if e.Type == EventError {
			span.SetAttributes(attribute.String("error.type", "turn_error"))
			span.SetStatus(codes.Error, "turn failed")
		}
		emit(e)
	}, func() { span.End() }
}
