package localserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/console/consoletest"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// approvalLab is two server instances on one store (SQLite file or
// DynamoDB table), one LLM, one GNS3 fake with an opened project and the
// router R1 on a fake console.
type approvalLab struct {
	t          *testing.T
	urlA, urlB string
	llm        *llmtest.Server
	gns3       *gns3test.Server
	alice, bob string
	project    string
	r1         *consoletest.IOS
}

func newApprovalLab(t *testing.T, storeKind string) *approvalLab {
	t.Helper()
	v, err := auth.NewJWTVerifier([]byte(copilotSecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	l := &approvalLab{t: t, llm: llmtest.NewServer(t)}
	l.alice, _ = v.Issue("alice", time.Hour)
	l.bob, _ = v.Issue("bob", time.Hour)
	l.gns3 = gns3test.NewServer(t, gns3test.AcceptTokens(l.alice, l.bob))
	l.gns3.SeedTemplates()
	l.project = l.gns3.AddProject("lab", gns3.StatusOpened)
	l.r1 = consoletest.NewIOS(t, consoletest.IOSOptions{Hostname: "R1"})
	n := gns3test.QemuRouterNode(l.project, "R1", 0, 0)
	n["status"], n["console"], n["console_host"] = "started", l.r1.Port(), "127.0.0.1"
	n["tags"] = []any{"device_type:cisco_ios_telnet"}
	l.gns3.AddNode(l.project, n)
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": copilotSecret,
		"OPENAI_BASE_URL": l.llm.BaseURL(), "OPENAI_API_KEY": "sk-test-llm-key", "OPENAI_MODEL": "test-model",
		"GNS3_URL": l.gns3.URL,
	}
	if storeKind == "dynamodb" {
		vars["STORE"], vars["TABLE_NAME"] = "dynamodb", "approvals-"+uuid.NewString()
		vars["DYNAMODB_ENDPOINT"], vars["AWS_REGION"] = dynalitetest.Start(t), "us-east-1"
	}
	l.urlA, _, _, _ = start(t, vars)
	varsB := map[string]string{}
	for k, v := range vars {
		varsB[k] = v
	}
	l.urlB, _, _, _ = start(t, varsB) // the same SQLite file or table
	return l
}

// call posts body to url+path with token and returns the status, the SSE
// events (decoded) or the JSON body.
func (l *approvalLab) call(method, url, path, token string, body any) (int, []map[string]any, string) {
	l.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(b)
	}
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				l.t.Fatalf("bad event %q", data)
			}
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 || evs[len(evs)-1]["type"] != "done" {
		l.t.Fatalf("%s %s: the stream did not end with done: %v", method, path, evs)
	}
	return resp.StatusCode, evs, ""
}

func (l *approvalLab) chat(rest string) string { return "/v3/projects/" + l.project + "/chat" + rest }

// ofType returns the events of type typ.
func ofType(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

// indexOf is the position of the first event of typ (with the call id
// when not empty), -1 when none.
func indexOf(evs []map[string]any, typ, callID string) int {
	for i, e := range evs {
		if e["type"] == typ && (callID == "" || e["tool_call_id"] == callID) {
			return i
		}
	}
	return -1
}

// TestApprovalAcrossInstances is the acceptance of issue 22 on both
// stores: a configuration change waits for approval (nothing reaches the
// device), is approved through the other instance (snapshot first, then
// the change, then the model's answer), a second change is declined (the
// model gets the declined tool message, the device nothing), undo restores
// the snapshot, and the audit lists each change with its decision to its
// user only.
func TestApprovalAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, storeKind := range []string{"sqlite", "dynamodb"} {
		t.Run(storeKind, func(t *testing.T) {
			t.Parallel()
			l := newApprovalLab(t, storeKind)
			sid := uuid.NewString()
			cfg := `{"device_configs":[{"device_name":"R1","config_commands":["interface GigabitEthernet0/1","ip address 10.0.0.1 255.255.255.0"]}]}`

			// 1. The turn pauses: approval_required, then done; R1 untouched.
			l.llm.Enqueue(llmtest.Reply{Text: "I will configure R1.", ToolCalls: []llmtest.ToolCall{
				{ID: "call_read", Name: "gns3_topology_reader", Arguments: `{}`},
				{ID: "call_cfg", Name: "execute_multiple_device_config_commands", Arguments: cfg}}})
			status, evs, body := l.call(http.MethodPost, l.urlA, l.chat("/stream"), l.alice, map[string]any{
				"message": "give R1 10.0.0.1 on Gi0/1", "session_id": sid, "copilot_mode": "lab_automation_assistant", "approval": "changes"})
			if status != http.StatusOK {
				t.Fatalf("stream: %d %s", status, body)
			}
			ar := ofType(evs, "approval_required")
			if len(ar) != 1 || ar[0]["tool_call_id"] != "call_cfg" || ar[0]["tool_name"] != "execute_multiple_device_config_commands" ||
				ar[0]["arguments"] != cfg || ar[0]["summary"] != "configure R1: `interface GigabitEthernet0/1`, `ip address 10.0.0.1 255.255.255.0`" {
				t.Fatalf("approval_required events: %v", ar)
			}
			if indexOf(evs, "tool_end", "call_read") < 0 || indexOf(evs, "tool_start", "call_cfg") >= 0 {
				t.Fatalf("the read-only call runs, the change waits: %v", evs)
			}
			if got := l.r1.ConfigLines(); len(got) != 0 {
				t.Fatalf("R1 received configuration before approval: %q", got)
			}
			if s := l.gns3.Snapshots(l.project); len(s) != 0 {
				t.Fatalf("a snapshot was taken before any change: %+v", s)
			}
			// The session shows what waits.
			_, _, list := l.call(http.MethodGet, l.urlB, l.chat("/sessions"), l.alice, nil)
			if !strings.Contains(list, `"pending_approvals"`) || !strings.Contains(list, `"call_cfg"`) {
				t.Fatalf("the session list does not show the pending approval: %s", list)
			}

			// 2. A new message is refused until the calls are decided.
			status, _, body = l.call(http.MethodPost, l.urlB, l.chat("/stream"), l.alice, map[string]any{"message": "hello?", "session_id": sid})
			if status != http.StatusConflict || !strings.Contains(body, "approval_decision") {
				t.Fatalf("a message on a paused session: %d %s", status, body)
			}
			// Another user cannot decide it.
			status, _, body = l.call(http.MethodPost, l.urlB, l.chat("/sessions/"+sid+"/approvals"), l.bob,
				map[string]any{"decisions": []map[string]any{{"tool_call_id": "call_cfg", "approve": true}}})
			if status != http.StatusNotFound {
				t.Fatalf("bob's approval: %d %s", status, body)
			}
			// An unknown id is refused.
			status, _, body = l.call(http.MethodPost, l.urlB, l.chat("/sessions/"+sid+"/approvals"), l.alice,
				map[string]any{"decisions": []map[string]any{{"tool_call_id": "call_nope", "approve": true}}})
			if status != http.StatusUnprocessableEntity || !strings.Contains(body, "call_nope") {
				t.Fatalf("an unknown id: %d %s", status, body)
			}

			// 3. Approved through the other instance: snapshot, change, answer.
			l.llm.Enqueue(llmtest.Reply{Text: "R1 now has 10.0.0.1 on Gi0/1."})
			status, evs, body = l.call(http.MethodPost, l.urlB, l.chat("/sessions/"+sid+"/approvals"), l.alice,
				map[string]any{"decisions": []map[string]any{{"tool_call_id": "call_cfg", "approve": true}}})
			if status != http.StatusOK {
				t.Fatalf("approve: %d %s", status, body)
			}
			snapAt, startAt := indexOf(evs, "snapshot", ""), indexOf(evs, "tool_start", "call_cfg")
			if snapAt < 0 || startAt < 0 || snapAt > startAt {
				t.Fatalf("the snapshot must come before the change: %v", evs)
			}
			snaps := l.gns3.Snapshots(l.project)
			if len(snaps) != 1 || ofType(evs, "snapshot")[0]["snapshot_id"] != snaps[0].SnapshotID || !strings.HasPrefix(snaps[0].Name, "copilot ") {
				t.Fatalf("snapshots %+v, events %v", snaps, ofType(evs, "snapshot"))
			}
			if te := ofType(evs, "tool_end"); len(te) != 1 || !strings.Contains(te[0]["tool_output"].(string), `"status":"success"`) {
				t.Fatalf("tool_end: %v", te)
			}
			var answer strings.Builder
			for _, e := range ofType(evs, "content") {
				answer.WriteString(e["content"].(string))
			}
			if answer.String() != "R1 now has 10.0.0.1 on Gi0/1." {
				t.Fatalf("answer %q", answer.String())
			}
			if got := strings.Join(l.r1.ConfigLines(), "|"); got != "interface GigabitEthernet0/1|ip address 10.0.0.1 255.255.255.0" {
				t.Fatalf("R1 config lines %q", got)
			}
			// Deciding again: nothing waits any more.
			status, _, body = l.call(http.MethodPost, l.urlA, l.chat("/sessions/"+sid+"/approvals"), l.alice,
				map[string]any{"decisions": []map[string]any{{"tool_call_id": "call_cfg", "approve": true}}})
			if status != http.StatusConflict {
				t.Fatalf("a second decision: %d %s", status, body)
			}

			// 4. Declined (the session's recorded policy applies): the model
			// is told, the device gets nothing.
			evil := `{"device_configs":[{"device_name":"R1","config_commands":["hostname EVIL"]}]}`
			l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_evil", Name: "execute_multiple_device_config_commands", Arguments: evil}}})
			_, evs, _ = l.call(http.MethodPost, l.urlA, l.chat("/stream"), l.alice, map[string]any{"message": "rename R1", "session_id": sid})
			if len(ofType(evs, "approval_required")) != 1 {
				t.Fatalf("the session's policy did not pause: %v", evs)
			}
			l.llm.Enqueue(llmtest.Reply{Text: "Understood, R1 keeps its name."})
			_, evs, _ = l.call(http.MethodPost, l.urlA, l.chat("/sessions/"+sid+"/approvals"), l.alice,
				map[string]any{"decisions": []map[string]any{{"tool_call_id": "call_evil", "approve": false, "note": "keep the name"}}})
			if te := ofType(evs, "tool_end"); len(te) != 1 || te[0]["tool_output"] != "declined by the user: keep the name" {
				t.Fatalf("declined tool_end: %v", te)
			}
			if l.r1.Received("hostname EVIL") {
				t.Fatal("a declined command reached R1")
			}
			reqs := l.llm.Requests()
			last := reqs[len(reqs)-1].Messages
			if m := last[len(last)-1]; m.Role != "tool" || m.ToolCallID != "call_evil" || m.Content != "declined by the user: keep the name" {
				t.Fatalf("the model was sent %+v", m)
			}

			// 5. Undo restores the snapshot.
			status, _, body = l.call(http.MethodPost, l.urlB, l.chat("/sessions/"+sid+"/undo"), l.alice, nil)
			if status != http.StatusOK || !strings.Contains(body, snaps[0].SnapshotID) {
				t.Fatalf("undo: %d %s", status, body)
			}
			if r := l.gns3.Restores(l.project); len(r) != 1 || r[0] != snaps[0].SnapshotID {
				t.Fatalf("restores %v", r)
			}

			// 6. The audit: each change with its decision, to alice only.
			var page struct {
				Entries []struct {
					Tool, Status, Decision, DecidedBy, SnapshotID string
					UserID                                        string `json:"user_id"`
				} `json:"entries"`
			}
			_, _, body = l.call(http.MethodGet, l.urlA, l.chat("/audit"), l.alice, nil)
			if err := json.Unmarshal([]byte(body), &page); err != nil {
				t.Fatal(body)
			}
			type row struct{ tool, status, decision string }
			var got []row
			for _, e := range page.Entries {
				got = append(got, row{e.Tool, e.Status, e.Decision})
			}
			want := []row{
				{"undo_gns3_snapshot", "success", "not_required"},
				{"execute_multiple_device_config_commands", "declined", "declined"},
				{"execute_multiple_device_config_commands", "success", "approved"},
			}
			if len(got) != len(want) {
				t.Fatalf("audit %s", body)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("audit entry %d = %+v, want %+v (%s)", i, got[i], want[i], body)
				}
			}
			if strings.Contains(body, l.alice) || strings.Contains(body, "sk-test-llm-key") {
				t.Fatal("a secret in the audit")
			}
			_, _, body = l.call(http.MethodGet, l.urlB, l.chat("/audit"), l.bob, nil)
			if !strings.Contains(body, `"entries":[]`) {
				t.Fatalf("bob sees %s", body)
			}
		})
	}
}
