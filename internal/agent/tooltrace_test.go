package agent

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentchat/internal/llm/llmtest"
)

// TestToolSpans: with a tracer, a turn gets a span "invoke_agent {agent}"
// under the caller's span and each of its tool calls a span
// "execute_tool {name}" under the turn's, with its name, call id
// and status; its arguments and output only with TraceContent.
func TestToolSpans(t *testing.T) {
	for _, content := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "content"}[content], func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			h := newHarness(t, []Tool{addTool(false)}, func(o *Options) {
				o.Tracer, o.TraceContent = tp.Tracer("test"), content
			})
			h.llm.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{
					{ID: "call_ok", Name: "add", Arguments: `{"a":40417,"b":2}`},
					{ID: "call_bad", Name: "nosuch", Arguments: `{}`},
				}},
				llmtest.Reply{Text: "done"},
			)
			ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
			checkEnd(t, h.turnCtx(ctx, newKey(), "add them", nil), false)
			parent.End()

			spans := map[string]tracetest.SpanStub{}
			for _, s := range exp.GetSpans() {
				spans[s.Name] = s
			}
			ok, bad := spans["execute_tool add"], spans["execute_tool nosuch"]
			if ok.Name == "" || bad.Name == "" {
				t.Fatalf("tool spans missing: %v", exp.GetSpans())
			}
			turn := spans["invoke_agent tester"]
			if turn.Name == "" || turn.Parent.SpanID() != parent.SpanContext().SpanID() {
				t.Fatalf("no turn span under the request span: %v", exp.GetSpans())
			}
			if turn.Status.Code == codes.Error {
				t.Errorf("turn status %v", turn.Status)
			}
			for _, s := range []tracetest.SpanStub{ok, bad} {
				if s.Parent.SpanID() != turn.SpanContext.SpanID() {
					t.Errorf("%s is not a child of the turn span", s.Name)
				}
			}
			attrs := func(s tracetest.SpanStub) map[string]string {
				m := map[string]string{}
				for _, kv := range s.Attributes {
					m[string(kv.Key)] = kv.Value.String()
				}
				return m
			}
			a := attrs(ok)
			if a["gen_ai.tool.name"] != "add" || a["gen_ai.tool.call.id"] != "call_ok" || a["gen_ai.operation.name"] != "execute_tool" {
				t.Errorf("add span attributes %v", a)
			}
			if ok.Status.Code == codes.Error || bad.Status.Code != codes.Error {
				t.Errorf("statuses: add %v, nosuch %v", ok.Status, bad.Status)
			}
			all := ""
			for _, s := range exp.GetSpans() {
				for k, v := range attrs(s) {
					all += k + "=" + v + " "
				}
			}
			if got := strings.Contains(all, "40417") && strings.Contains(all, "40419"); got != content {
				t.Errorf("arguments and output recorded: %v, want %v (%s)", got, content, all)
			}
		})
	}
}
