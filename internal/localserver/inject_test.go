package localserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agents"
	"agentchat/internal/llm/llmtest"

	"github.com/google/uuid"
)

// post sends body to path and reads the project stream the web UI's way,
// calling each(ev) as events arrive; it returns the status and the events
// (none unless 200).
func (l *copilotLab) post(path string, body map[string]any, each func(sse)) (int, []sse) {
	l.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, l.url+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var out []sse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev sse
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			l.t.Fatalf("bad event %q: %v", data, err)
		}
		ev.at = time.Now()
		out = append(out, ev)
		if each != nil {
			each(ev)
		}
		if ev.Type == "done" {
			break
		}
	}
	return resp.StatusCode, out
}

// sessionsOfMode lists alice's sessions of the project in mode.
func (l *copilotLab) sessionsOfMode(mode string) []map[string]any {
	l.t.Helper()
	status, body := l.do(http.MethodGet, "/v3/projects/"+l.project+"/chat/sessions?copilot_mode="+mode, nil)
	if status != http.StatusOK {
		l.t.Fatalf("list %s: %d %s", mode, status, body)
	}
	var list []map[string]any
	if err := json.Unmarshal(body, &list); err != nil {
		l.t.Fatal(err)
	}
	return list
}

// POST .../chat/inject under both prefixes: a new session in
// troubleshooting_injection mode whatever session_id or copilot_mode the
// body names, the injection prompt and tools, a default request for an
// empty message, and the session listed by its mode.
func TestInjectOpensAnInjectionSession(t *testing.T) {
	l := newCopilotLab(t, false)
	existing := uuid.NewString()
	l.llm.Enqueue(llmtest.Reply{Text: "A first session."})
	if _, evs := l.post("/v3/projects/"+l.project+"/chat/stream", map[string]any{"message": "hello", "session_id": existing}, nil); len(evs) == 0 {
		t.Fatal("no stream")
	}

	for i, prefix := range []string{"/v3/projects/", "/v3/copilot/projects/"} {
		l.llm.Enqueue(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_list", Name: "injection_scenarios", Arguments: `{"action":"list"}`}}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{ID: "call_get", Name: "injection_scenarios", Arguments: `{"action":"get","name":"interface_shutdown"}`},
				{ID: "call_skill", Name: "device_skills", Arguments: `{"action":"get","platform":"iol","topic":"interfaces"}`},
				{ID: "call_wait", Name: "wait_seconds", Arguments: `{"seconds":5}`},
			}},
			llmtest.Reply{Text: "Report: R1 Ethernet0/0 shut down; undo with no shutdown."},
		)
		before := len(l.llm.Requests())
		status, evs := l.post(prefix+l.project+"/chat/inject", map[string]any{"message": "", "session_id": existing, "copilot_mode": "teaching_assistant"}, nil)
		if status != http.StatusOK || evs[len(evs)-1].Type != "done" {
			t.Fatalf("%s: status %d, events %+v", prefix, status, evs)
		}
		sid := evs[0].SessionID
		if sid == "" || sid == existing {
			t.Fatalf("%s: session %q: /inject must open a new session", prefix, sid)
		}
		if r := parseResult(t, toolEnd(t, evs, "call_list").ToolOutput); !r.Success || r.Total < 12 {
			t.Errorf("injection_scenarios list: %+v", r)
		}
		if r := parseResult(t, toolEnd(t, evs, "call_get").ToolOutput); !r.Success || r.Results[0]["undo"] == nil {
			t.Errorf("injection_scenarios get: %+v", r)
		}
		if r := parseResult(t, toolEnd(t, evs, "call_skill").ToolOutput); !r.Success || r.Results[0]["topic"] != "interfaces" {
			t.Errorf("device_skills: %+v", r)
		}
		if out := toolEnd(t, evs, "call_wait").ToolOutput; !strings.Contains(out, "not allowed in troubleshooting_injection mode") {
			t.Errorf("wait_seconds in injection mode: %s", out)
		}
		reqs := l.llm.Requests()[before:]
		first := reqs[0]
		if sys := first.Messages[0].Content; !strings.Contains(sys, "Mode: troubleshooting_injection") {
			t.Errorf("system prompt of the injection turn: %.200q", sys)
		}
		if user := first.Messages[len(first.Messages)-1]; user.Role != "user" || user.Content != agents.DefaultInjectionRequest {
			t.Errorf("empty message became %q", user.Content)
		}
		var offered []string
		for _, tl := range first.Tools {
			offered = append(offered, tl.Function.Name)
		}
		for _, want := range []string{"gns3_topology_reader", "execute_multiple_device_commands", "execute_multiple_device_config_commands", "injection_scenarios", "device_skills"} {
			if !strings.Contains(strings.Join(offered, ","), want) {
				t.Errorf("%s not offered in injection mode: %v", want, offered)
			}
		}
		for _, no := range []string{"create_gns3_node", "delete_gns3_node", "wait_seconds"} {
			if strings.Contains(strings.Join(offered, ","), no) {
				t.Errorf("%s offered in injection mode: %v", no, offered)
			}
		}
		list := l.sessionsOfMode(agents.ModeTroubleshootingInjection)
		if len(list) != i+1 || list[0]["thread_id"] != sid {
			t.Fatalf("sessions of troubleshooting_injection: %v, want %s first", list, sid)
		}
		if meta, _ := list[0]["metadata"].(map[string]any); meta["copilot_mode"] != agents.ModeTroubleshootingInjection {
			t.Errorf("metadata %v", list[0]["metadata"])
		}
	}
	for _, s := range l.sessionsOfMode(agents.ModeTeachingAssistant) {
		if s["thread_id"] != existing {
			t.Errorf("an injection session is listed as teaching: %v", s)
		}
	}
	// Bad bodies are refused like /stream's; a request cannot pick the
	// injection mode on /stream.
	for _, tc := range []struct {
		path string
		body map[string]any
		want int
	}{
		{"/chat/inject", map[string]any{"message": "x", "temperature": 7}, http.StatusUnprocessableEntity},
		{"/chat/inject", map[string]any{"message": strings.Repeat("x", 33<<10)}, http.StatusRequestEntityTooLarge},
		{"/chat/stream", map[string]any{"message": "x", "copilot_mode": agents.ModeTroubleshootingInjection}, http.StatusUnprocessableEntity},
	} {
		if status, _ := l.post("/v3/projects/"+l.project+tc.path, tc.body, nil); status != tc.want {
			t.Errorf("%s %v: %d, want %d", tc.path, tc.body, status, tc.want)
		}
	}
	l.checkNoToken(nil)
}

// Teaching mode stays read-only: the injection tools are refused there.
func TestTeachingRefusesInjectionTools(t *testing.T) {
	l := newCopilotLab(t, false)
	l.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "call_inj", Name: "injection_scenarios", Arguments: `{"action":"list"}`},
			{ID: "call_cfg", Name: "execute_multiple_device_config_commands", Arguments: `{"device_configs":[{"device_name":"R1","config_commands":["interface e0/0","shutdown"]}]}`},
			{ID: "call_link", Name: "manage_gns3_link_conditions", Arguments: `{"action":"set","link":"x","conditions":{"packet_loss":100}}`},
		}},
		llmtest.Reply{Text: "I cannot do that in teaching mode."},
	)
	_, evs := l.post("/v3/projects/"+l.project+"/chat/stream", map[string]any{"message": "break the lab", "copilot_mode": agents.ModeTeachingAssistant}, nil)
	for _, id := range []string{"call_inj", "call_cfg", "call_link"} {
		if out := toolEnd(t, evs, id).ToolOutput; !strings.Contains(out, "not allowed in teaching_assistant mode") {
			t.Errorf("%s in teaching mode: %s", id, out)
		}
	}
}

// wait_seconds keeps the stream alive with heartbeats while it waits, and
// an abort ends the wait at once (a 600 s wait ends with the turn).
func TestWaitSecondsHeartbeatsAndAbort(t *testing.T) {
	t.Parallel()
	l := newCopilotLab(t, false)
	l.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_wait", Name: "wait_seconds", Arguments: `{"seconds":600}`}}},
		llmtest.Reply{Text: "not reached"},
	)
	sid := uuid.NewString()
	waiting, aborted := false, false
	_, evs := l.post("/v3/projects/"+l.project+"/chat/stream", map[string]any{"message": "start R1 and wait for it to boot", "session_id": sid}, func(ev sse) {
		switch {
		case ev.Type == "tool_start" && ev.ToolCallID == "call_wait":
			waiting = true
		case ev.Type == "heartbeat" && waiting && !aborted:
			aborted = true
			if status := l.abort(sid); status != http.StatusAccepted {
				t.Errorf("abort: %d", status)
			}
		}
	})
	if !aborted {
		t.Fatalf("no heartbeat during the wait: %+v", evs)
	}
	if evs[len(evs)-1].Type != "done" {
		t.Fatalf("the aborted turn did not end: %+v", evs)
	}
}

// SKILLS_DIR in the upstream layout is served through the copilot, and
// POST /v3/copilot/reload/skills re-reads it (the local user is the
// administrator of a single-user server; with JWT_SECRET an ordinary user
// is refused).
func TestSkillsDirAndReloadThroughTheServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "device"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "device", "junos.yaml"), []byte("name: Junos\ndevice_type: juniper_junos\ndisplay_commands:\n  routes:\n    syntax: show route\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newCopilotLab(t, true)
	lab := &copilotLab{t: t, llm: l.llm, token: l.token, project: l.project}
	lab.url, _, lab.logs, _ = start(t, map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": copilotSecret, "SKILLS_DIR": dir,
		"OPENAI_BASE_URL": l.llm.BaseURL(), "OPENAI_API_KEY": "sk-test-llm-key", "OPENAI_MODEL": "test-model",
	})
	lab.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_skill", Name: "device_skills", Arguments: `{"action":"get","platform":"juniper_junos"}`}}},
		llmtest.Reply{Text: "show route"},
	)
	_, evs := lab.post("/v3/projects/"+lab.project+"/chat/stream", map[string]any{"message": "how do I see routes on junos?"}, nil)
	if out := toolEnd(t, evs, "call_skill").ToolOutput; !strings.Contains(out, `"show route"`) {
		t.Fatalf("device_skills from SKILLS_DIR: %s", out)
	}
	if status, body := lab.do(http.MethodPost, "/v3/copilot/reload/skills", nil); status != http.StatusForbidden || !strings.Contains(string(body), "Only administrators can reload skills") {
		t.Fatalf("reload as a user: %d %s", status, body)
	}
}
