package localserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/pcapsum/pcaptest"
	"agentchat/internal/telemetry/telemetrytest"
)

// TestTraceOfATurnWithTwoTools: with OTEL_EXPORTER_OTLP_ENDPOINT set, a
// scripted turn with two tool calls gives one trace at the OTLP/HTTP
// receiver: the request's server span named by its route template, the
// turn's span under it, the LLM spans (the two of the turn with their usage, and the title's) and
// two tool spans under it, with the GNS3 requests of the tools under
// theirs, and the SQLite statements under the request or the turn; no API
// key, GNS3 token, prompt or tool argument in any of them (the prompt is
// a parameter of the message inserts).
func TestTraceOfATurnWithTwoTools(t *testing.T) {
	rc := telemetrytest.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	l := newCopilotLab(t, false)
	topo := l.gns3.SeedTopology(l.project)
	l.gns3.SetCaptureSource(topo.Links[0], func() io.Reader { return pcaptest.FaultCapture().Reader() })
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "call_one", Name: "analyze_link_traffic", Arguments: `{"link":"PC1:e0","max_packets":17}`},
		{ID: "call_two", Name: "manage_gns3_link_conditions", Arguments: `{"action":"set","link":"PC1:e0,Switch1:e0","conditions":{"packet_loss":30},"show_icon":false}`},
	}, Usage: &llmtest.Usage{PromptTokens: 120, CompletionTokens: 30}}, llmtest.Reply{Text: "Done and dusted.", Usage: &llmtest.Usage{PromptTokens: 200, CompletionTokens: 4}})
	l.stream(map[string]any{"message": "secret-prompt-words please", "copilot_mode": "lab_automation_assistant"}, nil)

	var spans []*tracepb.Span
	byName := map[string][]*tracepb.Span{}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		spans = rc.Spans()
		byName = map[string][]*tracepb.Span{}
		for _, s := range spans {
			byName[s.Name] = append(byName[s.Name], s)
		}
		if len(byName["POST /v3/projects/{project_id}/chat/stream"]) == 1 && len(byName["chat test-model"]) >= 2 {
			break
		}
	}
	server := byName["POST /v3/projects/{project_id}/chat/stream"]
	if len(server) != 1 {
		t.Fatalf("server spans: %d among %d", len(server), len(spans))
	}
	children := append(append([]*tracepb.Span{}, byName["chat test-model"]...), byName["execute_tool analyze_link_traffic"]...)
	children = append(children, byName["execute_tool manage_gns3_link_conditions"]...)
	if len(children) < 4 || len(byName["execute_tool analyze_link_traffic"]) != 1 || len(byName["execute_tool manage_gns3_link_conditions"]) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("want 2 LLM and 2 tool spans, got %v", names)
	}
	turn := byName["invoke_agent gns3-copilot"]
	if len(turn) != 1 || !bytes.Equal(turn[0].ParentSpanId, server[0].SpanId) {
		t.Fatalf("no turn span under the request span: %d", len(turn))
	}
	for _, c := range children {
		if !bytes.Equal(c.TraceId, server[0].TraceId) || !(bytes.Equal(c.ParentSpanId, turn[0].SpanId) || bytes.Equal(c.ParentSpanId, server[0].SpanId)) {
			t.Errorf("%s is not in the request's trace under the turn", c.Name)
		}
		if strings.HasPrefix(c.Name, "execute_tool ") && !bytes.Equal(c.ParentSpanId, turn[0].SpanId) {
			t.Errorf("%s is not a child of the turn span", c.Name)
		}
	}
	underTurn := 0
	for _, c := range byName["chat test-model"] {
		if bytes.Equal(c.ParentSpanId, turn[0].SpanId) {
			underTurn++
		}
	}
	if underTurn < 2 {
		t.Errorf("%d LLM spans under the turn, want its 2 steps", underTurn)
	}
	// The GNS3 requests of the tools are their children.
	gns3Spans, puts := 0, 0
	tools := append(append([]*tracepb.Span{}, byName["execute_tool analyze_link_traffic"]...), byName["execute_tool manage_gns3_link_conditions"]...)
	for _, s := range spans {
		if !strings.HasSuffix(s.Name, " gns3") {
			continue
		}
		gns3Spans++
		if s.Name == "PUT gns3" {
			puts++
		}
		if s.Name == "PUT gns3" && !bytes.Equal(s.ParentSpanId, byName["execute_tool manage_gns3_link_conditions"][0].SpanId) {
			t.Errorf("the link update is not a child of its tool's span")
		}
		if telemetrytest.Attr(s, "http.response.status_code") == nil {
			t.Errorf("GNS3 span %s without status", s.Name)
		}
	}
	if gns3Spans == 0 || puts != 1 || len(tools) != 2 {
		t.Errorf("%d GNS3 spans, %d PUT", gns3Spans, puts)
	}
	// The SQLite statements of the request are client spans in its trace,
	// under the request's span or the turn's (the turn's history read and
	// message appends under the turn).
	sqlSpans, sqlUnderTurn := 0, 0
	for _, s := range spans {
		if telemetrytest.Attr(s, "db.system.name").GetStringValue() != "sqlite" || !bytes.Equal(s.TraceId, server[0].TraceId) {
			continue
		}
		sqlSpans++
		if bytes.Equal(s.ParentSpanId, turn[0].SpanId) {
			sqlUnderTurn++
		} else if !bytes.Equal(s.ParentSpanId, server[0].SpanId) {
			t.Errorf("SQLite span %s is under neither the request nor the turn", s.Name)
		}
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || telemetrytest.Attr(s, "db.operation.name").GetStringValue() == "" {
			t.Errorf("SQLite span %s: kind %v, attributes %v", s.Name, s.Kind, s.Attributes)
		}
	}
	if sqlSpans == 0 || sqlUnderTurn == 0 || len(byName["INSERT messages"]) == 0 {
		t.Errorf("%d SQLite spans in the request's trace, %d under the turn, %d INSERT messages", sqlSpans, sqlUnderTurn, len(byName["INSERT messages"]))
	}
	usage := map[[2]int64]bool{}
	for _, c := range byName["chat test-model"] {
		usage[[2]int64{telemetrytest.Attr(c, "gen_ai.usage.input_tokens").GetIntValue(), telemetrytest.Attr(c, "gen_ai.usage.output_tokens").GetIntValue()}] = true
	}
	if !usage[[2]int64{120, 30}] || !usage[[2]int64{200, 4}] {
		t.Errorf("usage on the LLM spans: %v", usage)
	}
	if id := telemetrytest.Attr(byName["execute_tool analyze_link_traffic"][0], "gen_ai.tool.call.id").GetStringValue(); id != "call_one" {
		t.Errorf("tool call id %q", id)
	}
	for _, s := range spans {
		text := telemetrytest.Text(s)
		for _, secret := range []string{"sk-test-llm-key", l.token, "secret-prompt-words", "packet_loss", "Done and dusted", l.project} {
			if strings.Contains(text, secret) {
				t.Errorf("span %s exports %q", s.Name, secret)
			}
		}
	}
}
