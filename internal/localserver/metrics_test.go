package localserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/llm/llmtest"
)

// TestMetricsOfATurn: with METRICS=on, GET /metrics answers Prometheus
// text counting a scripted turn (started and completed), its three LLM
// calls (two steps and the title) with their tokens, its tool call, no stream left open, and a 409 by its
// route template; without METRICS it is 404.
func TestMetricsOfATurn(t *testing.T) {
	l := newCopilotLabWith(t, false, map[string]string{"METRICS": "on"})
	l.gns3.SeedTopology(l.project)
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_one", Name: "gns3_topology_reader", Arguments: `{}`}},
		Usage: &llmtest.Usage{PromptTokens: 120, CompletionTokens: 30}},
		llmtest.Reply{Text: "Two PCs and a switch.", Usage: &llmtest.Usage{PromptTokens: 200, CompletionTokens: 6}},
		// The session's title, generated once the answer is final.
		llmtest.Reply{Text: "Lab inventory", Usage: &llmtest.Usage{PromptTokens: 12, CompletionTokens: 3}})
	sid := uuid.NewString()
	l.stream(map[string]any{"message": "what is in my lab?", "session_id": sid}, nil)
	// Nothing waits for a decision: 409.
	if status, body := l.do(http.MethodPost, "/v3/projects/"+l.project+"/chat/sessions/"+sid+"/approvals",
		map[string]any{"decisions": []map[string]any{{"tool_call_id": "call_one", "approve": true}}}); status != http.StatusConflict {
		t.Fatalf("approvals on a session with nothing pending: %d %s", status, body)
	}

	// The client has its done event before the handler returns (and the
	// stream counts as closed) and the title's call ends: wait for both.
	var text string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		text = l.metrics(t, http.StatusOK)
		if strings.Contains(text, "agentchat_active_streams 0\n") &&
			strings.Contains(text, `gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_request_model="test-model"} 3`+"\n") {
			break
		}
	}
	for _, want := range []string{
		`agentchat_turns_started_total 1`,
		`agentchat_turns_ended_total{outcome="completed"} 1`,
		`agentchat_active_streams 0`,
		`agentchat_tool_calls_total{gen_ai_tool_name="gns3_topology_reader",status="ok"} 1`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_request_model="test-model",gen_ai_token_type="input"} 332`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_request_model="test-model",gen_ai_token_type="output"} 39`,
		`agentchat_http_refusals_total{route="POST /v3/projects/{project_id}/chat/sessions/{session_id}/approvals",status="409"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("missing %s", want)
		}
	}
	// Three calls timed; the two streamed ones have a first token.
	if !strings.Contains(text, `gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_request_model="test-model"} 3`+"\n") ||
		!strings.Contains(text, `agentchat_llm_time_to_first_token_seconds_count{gen_ai_request_model="test-model"} 2`+"\n") {
		t.Error("LLM durations or times to first token miscounted")
	}
	for _, leak := range []string{"alice", sid, l.project, "what is in my lab", "sk-test-llm-key"} {
		if strings.Contains(text, leak) {
			t.Errorf("the metrics name %q", leak)
		}
	}
	if t.Failed() {
		t.Log(text)
	}

	off := newCopilotLab(t, true)
	off.metrics(t, http.StatusNotFound)
}

// metrics returns GET /metrics, failing unless its status is want.
func (l *copilotLab) metrics(t *testing.T, want int) string {
	t.Helper()
	resp, err := http.Get(l.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	if want == http.StatusOK && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	return string(b)
}
