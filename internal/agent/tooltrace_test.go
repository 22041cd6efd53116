package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/telemetry"
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

// TestStatelessRunSpanAndMetrics: a stateless (/v1) run gets its own
// "invoke_agent {agent}" span, without a conversation id, with its tool
// call under it; with metrics, the run and its tool call are counted.
func TestStatelessRunSpanAndMetrics(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	m := telemetry.NewMetrics()
	h := newHarness(t, []Tool{addTool(true)}, func(o *Options) { o.Tracer, o.Metrics = tp.Tracer("test"), m })
	h.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "add", Arguments: `{"a":2,"b":3}`}}},
		llmtest.Reply{Text: "The sum is 5."},
	)
	var ev events
	if _, err := h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("add 2 and 3"), UserID: "u"}, ev.add); err != nil {
		t.Fatal(err)
	}
	checkEnd(t, ev, false)
	spans := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		spans[s.Name] = s
	}
	run, tool := spans["invoke_agent tester"], spans["execute_tool add"]
	if run.Name == "" || tool.Name == "" || tool.Parent.SpanID() != run.SpanContext.SpanID() {
		t.Fatalf("want the tool span under the run's: %v", exp.GetSpans())
	}
	for _, kv := range run.Attributes {
		if kv.Key == "gen_ai.conversation.id" {
			t.Errorf("a stateless run has no conversation: %v", kv.Value.AsString())
		}
	}
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"agentchat_turns_started_total 1\n",
		`agentchat_turns_ended_total{outcome="completed"} 1` + "\n",
		`agentchat_tool_calls_total{gen_ai_tool_name="add",status="ok"} 1` + "\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %s in\n%s", want, b.String())
		}
	}
}

func TestTurnOutcomes(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"turn completed", turnOutcome("", store.TurnStats{Turns: 1}), telemetry.TurnCompleted},
		{"turn failed", turnOutcome("The model failed.", store.TurnStats{Turns: 1}), telemetry.TurnFailed},
		{"turn aborted", turnOutcome("", store.TurnStats{Turns: 1, AbortedTurns: 1}), telemetry.TurnAborted},
		{"run completed", statelessOutcome(outFinal, nil), telemetry.TurnCompleted},
		{"run client gone", statelessOutcome(outStopped, context.Canceled), telemetry.TurnAborted},
		{"run timed out", statelessOutcome(outStopped, &userError{msg: "too long", err: context.DeadlineExceeded}), telemetry.TurnFailed},
		{"run failed", statelessOutcome(outFailed, errors.New("boom")), telemetry.TurnFailed},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
}
