// Package llmtrace traces and measures the calls to the LLM: a GenAI
// client span per call, under the tracing of package telemetry, and the
// GenAI client metrics (tokens, duration, time to first token). It lives apart from
// telemetry so that the functions that call no model do not link the LLM
// client.
package llmtrace

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/llm"
	"agentchat/internal/telemetry"
)

// Resolver returns r with every resolved client traced: a client span
// per call named "chat {model}" with the GenAI semantic conventions'
// attributes (gen_ai.operation.name, gen_ai.request.model,
// gen_ai.response.model, gen_ai.usage.*, gen_ai.response.finish_reasons),
// a gen_ai.first_token event and errors recorded. Prompts and completions
// are recorded only when p captures content. Each call is also counted in
// m (telemetry.Metrics.LLMCall). With a nil p and a nil m, r is returned as
// it is.
func Resolver(r llm.Resolver, p *telemetry.Provider, m *telemetry.Metrics) llm.Resolver {
	if (p == nil && m == nil) || r == nil {
		return r
	}
	return tracedResolver{next: r, p: p, m: m}
}

type tracedResolver struct {
	next llm.Resolver
	p    *telemetry.Provider
	m    *telemetry.Metrics
}

// Resolve resolves with the wrapped resolver and wraps the client.
func (t tracedResolver) Resolve(ctx context.Context, userID string) (llm.Resolved, error) {
	res, err := t.next.Resolve(ctx, userID)
	if err == nil && res.Client != nil {
		res.Client = tracedClient{next: res.Client, p: t.p, m: t.m}
	}
	return res, err
}

type tracedClient struct {
	next llm.Client
	p    *telemetry.Provider // nil: no span
	m    *telemetry.Metrics  // nil: not counted
}

// call is one LLM call being traced and measured.
type call struct {
	span       trace.Span
	model      string
	start      time.Time
	firstToken time.Duration
}

// Model is the wrapped client's model.
func (c tracedClient) Model() string { return c.next.Model() }

// Stream traces a streamed call; the first delta is the first token.
func (c tracedClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Result, error) {
	ctx, k := c.start(ctx, req)
	first := true
	wrapped := func(d llm.Delta) error {
		if first {
			first = false
			k.firstToken = time.Since(k.start)
			k.span.AddEvent("gen_ai.first_token")
		}
		if onDelta == nil {
			return nil
		}
		return onDelta(d)
	}
	res, err := c.next.Stream(ctx, req, wrapped)
	c.end(k, res, err)
	return res, err
}

// Complete traces a non-streamed call.
func (c tracedClient) Complete(ctx context.Context, req llm.Request) (*llm.Result, error) {
	ctx, k := c.start(ctx, req)
	res, err := c.next.Complete(ctx, req)
	c.end(k, res, err)
	return res, err
}

func (c tracedClient) start(ctx context.Context, req llm.Request) (context.Context, *call) {
	model := req.Model
	if model == "" {
		model = c.next.Model()
	}
	k := &call{model: model, start: time.Now()}
	if c.p == nil {
		// Not traced: the span of ctx (none: a no-op) takes the events.
		k.span = trace.SpanFromContext(context.Background())
		return ctx, k
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", model),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if c.p.CaptureContent() {
		if b, err := json.Marshal(req.Messages); err == nil {
			attrs = append(attrs, attribute.String("gen_ai.input.messages", string(b)))
		}
	}
	ctx, k.span = c.p.Tracer().Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, k
}

func (c tracedClient) end(k *call, res *llm.Result, err error) {
	span := k.span
	var in, out int
	if res != nil {
		in, out = res.Usage.PromptTokens, res.Usage.CompletionTokens
	}
	var errType string
	if err != nil {
		errType = errorType(err)
	}
	c.m.LLMCall(k.model, in, out, time.Since(k.start), k.firstToken, errType)
	if res != nil {
		if res.Model != "" {
			span.SetAttributes(attribute.String("gen_ai.response.model", res.Model))
		}
		span.SetAttributes(
			attribute.Int("gen_ai.usage.input_tokens", res.Usage.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", res.Usage.CompletionTokens),
		)
		if res.FinishReason != "" {
			span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{res.FinishReason}))
		}
		if c.p.CaptureContent() {
			out := struct {
				Content   string `json:"content,omitempty"`
				ToolCalls any    `json:"tool_calls,omitempty"`
			}{res.Content, res.ToolCalls}
			if b, err := json.Marshal(out); err == nil {
				span.SetAttributes(attribute.String("gen_ai.output.messages", string(b)))
			}
		}
	}
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errType))
		span.SetStatus(codes.Error, errType)
	}
	span.End()
}

// errorType is error.type of a failed call: the llm.Error kind, else
// telemetry.ErrorType's, never the message (which may quote the server).
func errorType(err error) string {
	if le, ok := errors.AsType[*llm.Error](err); ok {
		return string(le.Kind)
	}
	return telemetry.ErrorType(err)
}
