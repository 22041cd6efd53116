package localserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/syncbuf"

	"github.com/google/uuid"
)

// The copilot acting on a lab, as the GNS3 web UI drives it: the local
// server (JWT mode, SQLite) between the scripted LLM and the fake GNS3
// controller, over real HTTP.

const copilotSecret = "copilot-test-secret-0123456789abcdef"

// copilotLab is a running server with its fakes.
type copilotLab struct {
	t       *testing.T
	url     string
	dataDir string
	logs    *syncbuf.Buffer
	llm     *llmtest.Server
	gns3    *gns3test.Server
	token   string
	project string
}

// newCopilotLab starts the server with GNS3_URL (unless noGNS3) and an
// opened project with the lab templates; alice's JWT is accepted by both.
func newCopilotLab(t *testing.T, noGNS3 bool) *copilotLab {
	t.Helper()
	return newCopilotLabWith(t, noGNS3, nil)
}

// newCopilotLabWith is newCopilotLab with extra server variables.
func newCopilotLabWith(t *testing.T, noGNS3 bool, extra map[string]string) *copilotLab {
	t.Helper()
	v, err := auth.NewJWTVerifier([]byte(copilotSecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	token, err := v.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	l := &copilotLab{t: t, dataDir: t.TempDir(), llm: llmtest.NewServer(t), token: token}
	l.gns3 = gns3test.NewServer(t, gns3test.AcceptTokens(token))
	l.gns3.SeedTemplates()
	l.project = l.gns3.AddProject("lab", gns3.StatusOpened)
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": l.dataDir, "JWT_SECRET": copilotSecret,
		"OPENAI_BASE_URL": l.llm.BaseURL(), "OPENAI_API_KEY": "sk-test-llm-key", "OPENAI_MODEL": "test-model",
		"HEARTBEAT_SECONDS": "1",
	}
	if !noGNS3 {
		vars["GNS3_URL"] = l.gns3.URL
	}
	maps.Copy(vars, extra)
	l.url, _, l.logs, _ = start(t, vars)
	return l
}

// sse is one decoded event of the project stream.
type sse struct {
	Type       string `json:"type"`
	Content    string `json:"content"`
	ToolName   string `json:"tool_name"`
	ToolCallID string `json:"tool_call_id"`
	ToolOutput string `json:"tool_output"`
	Error      string `json:"error"`
	SessionID  string `json:"session_id"`
	ToolCall   *struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Complete  bool   `json:"complete"`
		} `json:"function"`
	} `json:"tool_call"`
	at time.Time
}

// do sends a request with alice's token and returns the status and body.
func (l *copilotLab) do(method, path string, body any) (int, []byte) {
	l.t.Helper()
	return sendJSON(l.t, l.url, l.token, method, path, body)
}

// sendJSON sends body (nil: none) as JSON with the bearer token and
// returns the status and the response body.
func sendJSON(t *testing.T, baseURL, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, baseURL+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// abort asks to stop the session's turn and returns the status (0 when
// the request failed); safe to call from any goroutine.
func (l *copilotLab) abort(sessionID string) int {
	req, _ := http.NewRequest(http.MethodPost, l.url+"/v3/projects/"+l.project+"/chat/sessions/"+sessionID+"/abort", nil)
	req.Header.Set("Authorization", "Bearer "+l.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// stream posts a turn the way the web UI does (split on \n, parse data:
// lines, stop at done or error) and calls each(ev) as events arrive.
func (l *copilotLab) stream(body map[string]any, each func(sse)) []sse {
	l.t.Helper()
	status, out := l.post("/v3/projects/"+l.project+"/chat/stream", body, each)
	if status != http.StatusOK {
		l.t.Fatalf("stream: %d", status)
	}
	if len(out) == 0 || out[len(out)-1].Type != "done" {
		l.t.Fatalf("stream did not end with done: %+v", out)
	}
	return out
}

// toolEnd returns the tool_end of the call id.
func toolEnd(t *testing.T, evs []sse, id string) sse {
	t.Helper()
	for _, e := range evs {
		if e.Type == "tool_end" && e.ToolCallID == id {
			return e
		}
	}
	t.Fatalf("no tool_end for %s in %+v", id, evs)
	return sse{}
}

// result is the common shape of a lab tool's output.
type result struct {
	Success    bool             `json:"success"`
	Total      int              `json:"total"`
	Successful int              `json:"successful"`
	Failed     int              `json:"failed"`
	Results    []map[string]any `json:"results"`
}

func parseResult(t *testing.T, out string) result {
	t.Helper()
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("tool output is not the result shape: %q", out)
	}
	return r
}

// checkNoToken scans everything the token must never reach: LLM requests,
// events, the server's logs and every file of the store.
func (l *copilotLab) checkNoToken(evs []sse) {
	l.t.Helper()
	for _, r := range l.llm.Requests() {
		if strings.Contains(string(r.Body), l.token) {
			l.t.Errorf("LLM request %d carries the user's JWT", r.N)
		}
	}
	for _, e := range evs {
		if strings.Contains(e.ToolOutput+e.Content+e.Error, l.token) {
			l.t.Errorf("event %s carries the user's JWT", e.Type)
		}
	}
	if strings.Contains(l.logs.String(), l.token) {
		l.t.Error("a log line carries the user's JWT")
	}
	files, _ := filepath.Glob(filepath.Join(l.dataDir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte(l.token)) {
			l.t.Errorf("store file %s holds the user's JWT", filepath.Base(f))
		}
	}
}

func TestCopilotBuildsAndStartsALab(t *testing.T) {
	l := newCopilotLab(t, false)
	l.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_create", Name: "create_gns3_node",
			Arguments: `{"nodes":[{"template":"IOU L3","name":"R1"},{"template":"IOU L3","name":"R2"}]}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_link", Name: "create_gns3_link",
			Arguments: `{"links":[{"node_a":"R1","port_a":"e0/0","node_b":"R2","port_b":"e0/0"}]}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_start", Name: "start_gns3_node", Arguments: `{"nodes":["R1","R2"]}`}}},
		llmtest.Reply{Text: "R1 and R2 are linked and started."},
	)
	sid := uuid.NewString()
	evs := l.stream(map[string]any{"message": "add two routers and link them R1 e0/0 to R2 e0/0, then start them", "session_id": sid}, nil)

	// Per tool: tool_call (first with "", cumulative, last complete) →
	// tool_start → tool_end, matched by tool_call_id.
	for _, id := range []string{"call_create", "call_link", "call_start"} {
		var seq []string
		var calls []string
		for _, e := range evs {
			switch {
			case e.Type == "tool_call" && e.ToolCall.ID == id:
				seq = append(seq, "call")
				calls = append(calls, e.ToolCall.Function.Arguments)
				if e.ToolCall.Function.Complete {
					seq = append(seq, "complete")
				}
			case (e.Type == "tool_start" || e.Type == "tool_end") && e.ToolCallID == id:
				seq = append(seq, e.Type)
			}
		}
		got := strings.Join(seq, " ")
		if !strings.HasSuffix(got, "call complete tool_start tool_end") || calls[0] != "" {
			t.Fatalf("%s: events %s, arguments %q", id, got, calls)
		}
		for i := 1; i < len(calls); i++ {
			if !strings.HasPrefix(calls[i], calls[i-1]) {
				t.Fatalf("%s: arguments not cumulative: %q", id, calls)
			}
		}
		if r := parseResult(t, toolEnd(t, evs, id).ToolOutput); !r.Success || r.Failed != 0 || r.Total != r.Successful || r.Total == 0 {
			t.Fatalf("%s: %+v", id, r)
		}
	}
	if last := evs[len(evs)-2]; last.Type == "error" {
		t.Fatalf("turn failed: %s", last.Error)
	}

	// The lab: two started routers, one link on adapter 0 port 0 of each.
	nodes := l.gns3.Nodes(l.project)
	ids := map[string]string{}
	for _, n := range nodes {
		ids[n["name"].(string)] = n["node_id"].(string)
		if n["status"] != "started" {
			t.Errorf("node %s is %v", n["name"], n["status"])
		}
	}
	links := l.gns3.Links(l.project)
	if len(nodes) != 2 || ids["R1"] == "" || ids["R2"] == "" || len(links) != 1 {
		t.Fatalf("lab: nodes %v, %d links", ids, len(links))
	}
	linked := map[string]bool{}
	for _, e := range links[0]["nodes"].([]any) {
		end := e.(map[string]any)
		linked[end["node_id"].(string)] = true
		if fmt.Sprint(end["adapter_number"], "/", end["port_number"]) != "0/0" {
			t.Fatalf("link end %v is not adapter 0 port 0 (e0/0)", end)
		}
	}
	if !linked[ids["R1"]] || !linked[ids["R2"]] {
		t.Fatalf("link %v does not join R1 and R2 %v", links[0]["nodes"], ids)
	}

	// The step after each change saw the lab as it is now.
	var prompts []string
	for _, r := range l.llm.Requests() {
		if len(r.Tools) > 0 {
			prompts = append(prompts, r.Messages[0].Content)
		}
	}
	if len(prompts) != 4 || strings.Contains(prompts[0], `"name":"R1"`) || !strings.Contains(prompts[1], `"name":"R1"`) ||
		!strings.Contains(prompts[3], `"status":"started"`) {
		t.Fatalf("system prompts of the 4 steps do not follow the lab: %d", len(prompts))
	}
	// The first was read as the turn started, with the user's token.
	if !strings.Contains(prompts[0], `{"project_id":"`+l.project+`","nodes":[]`) || strings.Contains(prompts[0], "unavailable") {
		t.Fatalf("the first step's topology was not read: %q", prompts[0])
	}

	// Statistics count each tool by name; the history holds the calls and
	// the tool messages with name and tool_call_id.
	st, body := l.do(http.MethodGet, "/v3/projects/"+l.project+"/chat/sessions", nil)
	var list []struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
		Stats    struct {
			ToolCalls map[string]int `json:"tool_calls"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(body, &list); st != http.StatusOK || err != nil || len(list) != 1 {
		t.Fatalf("sessions: %d %s", st, body)
	}
	if tc := list[0].Stats.ToolCalls; tc["create_gns3_node"] != 1 || tc["create_gns3_link"] != 1 || tc["start_gns3_node"] != 1 {
		t.Fatalf("stats.tool_calls = %v", tc)
	}
	if list[0].Metadata["copilot_mode"] != "teaching_assistant" {
		t.Fatalf("metadata = %v", list[0].Metadata)
	}
	st, body = l.do(http.MethodGet, "/v3/projects/"+l.project+"/chat/sessions/"+sid+"/history", nil)
	var hist struct {
		Messages []struct {
			Role       string `json:"role"`
			Name       string `json:"name"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &hist); st != http.StatusOK || err != nil {
		t.Fatalf("history: %d %s", st, body)
	}
	var roles []string
	for _, m := range hist.Messages {
		r := m.Role
		if len(m.ToolCalls) > 0 {
			r += "(" + m.ToolCalls[0].ID + ")"
		}
		if m.Role == "tool" {
			r += "(" + m.Name + ":" + m.ToolCallID + ")"
		}
		roles = append(roles, r)
	}
	want := "user assistant(call_create) tool(create_gns3_node:call_create) assistant(call_link) tool(create_gns3_link:call_link) " +
		"assistant(call_start) tool(start_gns3_node:call_start) assistant"
	if got := strings.Join(roles, " "); got != want {
		t.Fatalf("history:\n got %s\nwant %s", got, want)
	}
	if got := l.gns3.LastAuthorization(); got != "Bearer "+l.token {
		t.Fatalf("GNS3 saw Authorization %q", got)
	}
	l.checkNoToken(evs)
}

func TestCopilotWaitsForABootingNodeAndStopsOnAbort(t *testing.T) {
	t.Parallel()
	l := newCopilotLab(t, false)
	pc := l.gns3.AddNode(l.project, gns3test.VPCSNode(l.project, "PC1", "stopped", 5001, 0, 0))

	// A start that takes a few heartbeat periods: heartbeats flow during the
	// wait, and the tool reports the node started.
	l.gns3.SetTransitionDelay(pc, 3500*time.Millisecond)
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_start", Name: "start_gns3_node", Arguments: `{"nodes":["PC1"]}`}}},
		llmtest.Reply{Text: "PC1 is up."})
	evs := l.stream(map[string]any{"message": "start PC1"}, nil)
	var start, end time.Time
	beats := 0
	for _, e := range evs {
		switch {
		case e.Type == "tool_start":
			start = e.at
		case e.Type == "tool_end":
			end = e.at
		case e.Type == "heartbeat" && !start.IsZero() && end.IsZero():
			beats++
		}
	}
	if beats < 2 {
		t.Fatalf("%d heartbeats during the wait: %+v", beats, evs)
	}
	r := parseResult(t, toolEnd(t, evs, "call_start").ToolOutput)
	if !r.Success || r.Results[0]["status"] != "success" || !strings.Contains(toolEnd(t, evs, "call_start").ToolOutput, "started") {
		t.Fatalf("start result: %s", toolEnd(t, evs, "call_start").ToolOutput)
	}

	// A node that would take a minute: an abort during the wait ends the
	// turn long before the node is up.
	l.gns3.SetNodeStatus(l.project, pc, "stopped")
	l.gns3.SetTransitionDelay(pc, time.Minute)
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_slow", Name: "start_gns3_node", Arguments: `{"nodes":["PC1"]}`}}})
	sid := uuid.NewString()
	began := time.Now()
	aborted := make(chan int, 1)
	evs = l.stream(map[string]any{"message": "start PC1 again", "session_id": sid}, func(e sse) {
		if e.Type == "tool_start" {
			go func() { aborted <- l.abort(sid) }()
		}
	})
	if st := <-aborted; st != http.StatusAccepted {
		t.Fatalf("abort: %d", st)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("the aborted turn took %s", took)
	}
	for _, e := range evs {
		if e.Type == "error" {
			t.Fatalf("an abort is not an error: %s", e.Error)
		}
	}
	if st := l.gns3.Node(l.project, pc)["status"]; st != "stopped" {
		t.Fatalf("node status %v", st)
	}
	// The session is free again.
	l.llm.Enqueue(llmtest.Reply{Text: "ok"})
	l.stream(map[string]any{"message": "still there?", "session_id": sid}, nil)
	l.checkNoToken(evs)
}

func TestCopilotModesEnforced(t *testing.T) {
	l := newCopilotLab(t, false)
	pc := l.gns3.AddNode(l.project, gns3test.VPCSNode(l.project, "PC1", "started", 5001, 0, 0))
	stopPath := "POST /v3/projects/" + l.project + "/nodes/" + pc + "/stop"
	tests := []struct {
		mode      string
		wantStops int
		want      string
	}{
		{"teaching_assistant", 0, "not allowed in teaching_assistant mode"},
		{"lab_automation_assistant", 1, `"success":true`},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_stop", Name: "stop_gns3_node", Arguments: `{"nodes":["PC1"]}`}}},
				llmtest.Reply{Text: "Done."})
			before := l.gns3.Hits(stopPath)
			n := len(l.llm.Requests())
			evs := l.stream(map[string]any{"message": "stop PC1", "copilot_mode": tc.mode}, nil)
			out := toolEnd(t, evs, "call_stop").ToolOutput
			if !strings.Contains(out, tc.want) {
				t.Fatalf("stop in %s: %s", tc.mode, out)
			}
			if got := l.gns3.Hits(stopPath) - before; got != tc.wantStops {
				t.Fatalf("GNS3 received %d stops", got)
			}
			// The model was offered only the mode's tools.
			offered := false
			for _, tool := range l.llm.Requests()[n].Tools {
				offered = offered || tool.Function.Name == "stop_gns3_node"
			}
			if offered != (tc.wantStops == 1) {
				t.Fatalf("stop_gns3_node offered = %v in %s", offered, tc.mode)
			}
		})
	}
	// The listing filters by the mode each session was created in.
	for mode, want := range map[string]int{"teaching_assistant": 1, "lab_automation_assistant": 1} {
		st, body := l.do(http.MethodGet, "/v3/projects/"+l.project+"/chat/sessions?copilot_mode="+mode, nil)
		var list []map[string]any
		if err := json.Unmarshal(body, &list); st != http.StatusOK || err != nil || len(list) != want || list[0]["metadata"].(map[string]any)["copilot_mode"] != mode {
			t.Fatalf("sessions?copilot_mode=%s: %d %s", mode, st, body)
		}
	}
}

func TestCopilotPermissionsAndConfiguration(t *testing.T) {
	t.Run("a user without the GNS3 permission", func(t *testing.T) {
		l := newCopilotLab(t, false)
		l.gns3.SetRequestAuthorizer(gns3test.DenyChanges(l.token))
		l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_create", Name: "create_gns3_node", Arguments: `{"nodes":[{"template":"VPCS"}]}`}}},
			llmtest.Reply{Text: "You lack the permission."})
		evs := l.stream(map[string]any{"message": "add a PC"}, nil)
		out := toolEnd(t, evs, "call_create").ToolOutput
		if r := parseResult(t, out); r.Success || r.Failed != 1 || !strings.Contains(out, "403") || !strings.Contains(out, "permission") {
			t.Fatalf("tool output: %s", out)
		}
		if evs[len(evs)-2].Type == "error" {
			t.Fatalf("turn failed: %+v", evs)
		}
		if len(l.gns3.Nodes(l.project)) != 0 {
			t.Fatal("a node was created")
		}
		l.checkNoToken(evs)
	})
	t.Run("a closed project", func(t *testing.T) {
		l := newCopilotLab(t, false)
		l.gns3.SetStatus(l.project, gns3.StatusClosed)
		st, body := l.do(http.MethodPost, "/v3/projects/"+l.project+"/chat/stream", map[string]any{"message": "hi"})
		if st != http.StatusForbidden || !strings.Contains(string(body), "Project must be opened to use chat. Current status: closed") {
			t.Fatalf("closed project: %d %s", st, body)
		}
		if n := len(l.llm.Requests()); n != 0 {
			t.Fatalf("%d LLM calls", n)
		}
	})
	t.Run("without GNS3_URL", func(t *testing.T) {
		l := newCopilotLab(t, true)
		l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_topo", Name: "gns3_topology_reader", Arguments: `{}`}}},
			llmtest.Reply{Text: "GNS3 is not configured here."})
		evs := l.stream(map[string]any{"message": "what is in my lab?"}, nil)
		if out := toolEnd(t, evs, "call_topo").ToolOutput; !strings.Contains(out, "GNS3 is not configured") {
			t.Fatalf("tool output: %s", out)
		}
		if l.gns3.Requests() != 0 {
			t.Fatal("GNS3 was called")
		}
	})
}

// TestCopilotOnTheGateway: an OpenAI client drives a lab through /v1: the
// copilot lists the projects, then acts on one by project_id.
func TestCopilotOnTheGateway(t *testing.T) {
	l := newCopilotLab(t, false)
	l.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_list", Name: "list_gns3_projects", Arguments: `{}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_create", Name: "create_gns3_node",
			Arguments: `{"project_id":"` + l.project + `","nodes":[{"template":"VPCS","name":"PC9"}]}`}}},
		llmtest.Reply{Text: "PC9 added to lab."},
	)
	st, body := l.do(http.MethodPost, "/v1/chat/completions", map[string]any{
		"model": "gns3-copilot", "messages": []map[string]any{{"role": "user", "content": "add a PC to my lab"}},
	})
	var out struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []any  `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &out); st != http.StatusOK || err != nil || len(out.Choices) != 1 {
		t.Fatalf("completion: %d %s", st, body)
	}
	if c := out.Choices[0].Message; !strings.Contains(c.Content, "PC9 added to lab.") || len(c.ToolCalls) != 0 {
		t.Fatalf("message = %+v", c)
	}
	nodes := l.gns3.Nodes(l.project)
	if len(nodes) != 1 || nodes[0]["name"] != "PC9" {
		t.Fatalf("nodes = %v", nodes)
	}
	reqs := l.llm.Requests()
	schemas := map[string]string{}
	for _, tool := range reqs[0].Tools {
		b, _ := json.Marshal(tool.Function.Parameters)
		schemas[tool.Function.Name] = string(b)
	}
	if _, ok := schemas["list_gns3_projects"]; !ok || !strings.Contains(schemas["create_gns3_node"], `"project_id"`) {
		t.Fatalf("gateway tools: %v", schemas)
	}
	if _, ok := schemas["stop_gns3_node"]; ok {
		t.Fatal("teaching mode (the default) offered stop_gns3_node")
	}
	if !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, l.project) {
		t.Fatalf("list_gns3_projects result: %q", reqs[1].Messages[len(reqs[1].Messages)-1].Content)
	}
	// copilot_mode selects the mode on /v1 too; a bad one is a 400.
	l.llm.Enqueue(llmtest.Reply{Text: "ok"})
	if st, body := l.do(http.MethodPost, "/v1/chat/completions", map[string]any{"model": "gns3-copilot", "copilot_mode": "lab_automation_assistant",
		"messages": []map[string]any{{"role": "user", "content": "hi"}}}); st != http.StatusOK {
		t.Fatalf("automation mode: %d %s", st, body)
	}
	names := ""
	for _, tool := range l.llm.Requests()[len(l.llm.Requests())-1].Tools {
		names += tool.Function.Name + " "
	}
	if !strings.Contains(names, "stop_gns3_node") {
		t.Fatalf("automation tools on /v1: %s", names)
	}
	if st, body := l.do(http.MethodPost, "/v1/chat/completions", map[string]any{"model": "gns3-copilot", "copilot_mode": "root",
		"messages": []map[string]any{{"role": "user", "content": "hi"}}}); st != http.StatusBadRequest || !strings.Contains(string(body), "copilot_mode") {
		t.Fatalf("bad mode: %d %s", st, body)
	}
	l.checkNoToken(nil)
}
