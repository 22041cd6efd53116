package agent

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// noTurnSpan is the end of a turn span never started (tracing off).
func noTurnSpan() {}

// traceTurn starts the span of a project chat turn ("invoke_agent
// {agent}", gen_ai.operation.name invoke_agent, gen_ai.agent.id,
// gen_ai.conversation.id the session) when Options.Tracer is set, and
// returns the context of the turn's calls, emit watching for the turn's
// error (status Error, error.type turn_error; the message is not
// recorded) and the span's end. With tracing off it returns its arguments
// and a no-op.
func (rt *Runtime) traceTurn(ctx context.Context, req TurnRequest, emit func(Event)) (context.Context, func(Event), func()) {
	tr := rt.o.Tracer
	if tr == nil {
		return ctx, emit, noTurnSpan
	}
	ctx, span := tr.Start(ctx, "invoke_agent "+req.AgentID, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.id", req.AgentID),
		attribute.String("gen_ai.conversation.id", req.Key.ThreadID),
	))
	return ctx, func(e Event) {
		if e.Type == EventError {
			span.SetAttributes(attribute.String("error.type", "turn_error"))
			span.SetStatus(codes.Error, "turn failed")
		}
		emit(e)
	}, func() { span.End() }
}
