package telemetry_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"agentchat/internal/telemetry"
)

func TestNilMetricsCountNothing(t *testing.T) {
	var m *telemetry.Metrics
	m.LLMCall("m", 1, 2, time.Second, time.Millisecond, "")
	m.TurnStarted()
	m.TurnEnded(telemetry.TurnFailed)
	m.StreamOpened()
	m.StreamClosed()
	m.ToolCall("t", true)
	m.Refused("GET /x", 429)
	var b strings.Builder
	if err := m.WriteText(&b); err != nil || b.Len() != 0 {
		t.Fatalf("nil metrics wrote %q, %v", b.String(), err)
	}
}

// sample is one line of the exposition: name{labels} value.
var sample = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? [-+0-9.eInf]+$`)

func TestMetricsText(t *testing.T) {
	m := telemetry.NewMetrics()
	m.LLMCall("gpt-4o", 100, 20, 300*time.Millisecond, 50*time.Millisecond, "")
	m.LLMCall("gpt-4o", 3000, 5, 3*time.Second, 0, "")
	m.LLMCall("gpt-4o", 0, 0, 100*time.Millisecond, 0, "timeout")
	m.TurnStarted()
	m.TurnStarted()
	m.TurnEnded(telemetry.TurnCompleted)
	m.TurnEnded(telemetry.TurnAborted)
	m.StreamOpened()
	m.StreamOpened()
	m.StreamClosed()
	m.ToolCall("gns3_topology_reader", false)
	m.ToolCall("gns3_topology_reader", false)
	m.ToolCall(`odd"name\`, true)
	m.Refused("POST /v3/projects/{project_id}/chat/stream", 409)
	m.Refused("POST /v1/chat/completions", 429)
	m.Refused("POST /v1/chat/completions", 500)
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !strings.HasPrefix(line, "# ") && !sample.MatchString(line) {
			t.Errorf("not a Prometheus sample line: %q", line)
		}
	}
	want := []string{
		`# TYPE gen_ai_client_token_usage histogram`,
		`gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",gen_ai_token_type="input",le="64"} 0`,
		`gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",gen_ai_token_type="input",le="256"} 1`,
		`gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",gen_ai_token_type="input",le="4096"} 2`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",gen_ai_token_type="input"} 3100`,
		`gen_ai_client_token_usage_count{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",gen_ai_token_type="output"} 2`,
		`gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o"} 2`,
		`gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",error_type="timeout"} 1`,
		`gen_ai_client_operation_duration_seconds_bucket{gen_ai_operation_name="chat",gen_ai_request_model="gpt-4o",le="+Inf"} 2`,
		`agentchat_llm_time_to_first_token_seconds_count{gen_ai_request_model="gpt-4o"} 1`,
		`agentchat_llm_time_to_first_token_seconds_bucket{gen_ai_request_model="gpt-4o",le="0.04"} 0`,
		`agentchat_llm_time_to_first_token_seconds_bucket{gen_ai_request_model="gpt-4o",le="0.08"} 1`,
		`agentchat_turns_started_total 2`,
		`agentchat_turns_ended_total{outcome="aborted"} 1`,
		`agentchat_turns_ended_total{outcome="completed"} 1`,
		`agentchat_active_streams 1`,
		`agentchat_tool_calls_total{gen_ai_tool_name="gns3_topology_reader",status="ok"} 2`,
		`agentchat_tool_calls_total{gen_ai_tool_name="odd\"name\\",status="error"} 1`,
		`agentchat_http_refusals_total{route="POST /v3/projects/{project_id}/chat/stream",status="409"} 1`,
		`agentchat_http_refusals_total{route="POST /v1/chat/completions",status="429"} 1`,
	}
	for _, w := range want {
		if !strings.Contains(text, w+"\n") {
			t.Errorf("missing %s", w)
		}
	}
	if strings.Contains(text, `status="500"`) {
		t.Error("a 500 was counted as a refusal")
	}
	if t.Failed() {
		t.Log(text)
	}
}
