package localserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm/llmtest"
)

// The GNS3 web UI's own sequence of calls for its copilot screens, against
// the local server in JWT mode with the fake GNS3 controller and a scripted
// LLM, each answer read the way the UI reads it: times through its
// append-"Z" rule, streams split on "\n" with only "data: " lines read,
// heartbeats skipped and the first "done" or "error" ending the read,
// error bodies shown by their "message".

const webUISecret = "webui-contract-secret-0123456789abcdef"

// webUI is the web UI of one user: the GNS3 token it holds and the server
// and controller it talks to.
type webUI struct {
	t      *testing.T
	url    string
	gns3   string
	token  string
	userID string
}

// call sends what the UI sends (JSON body, bearer token) and returns the
// status and the body.
func (u *webUI) call(method, path string, body any) (int, []byte) {
	u.t.Helper()
	return sendJSON(u.t, u.url, u.token, method, path, body)
}

// json calls and decodes a 2xx answer into v; any other status fails with
// the message the UI would show.
func (u *webUI) json(method, path string, body any, want int, v any) {
	u.t.Helper()
	st, b := u.call(method, path, body)
	if st != want {
		u.t.Fatalf("%s %s: %d, the UI shows %q", method, path, st, uiMessage(b))
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			u.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// uiMessage is what the UI shows of an error body: its message.
func uiMessage(b []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Message
}

// uiEvent is an SSE event as the UI's chat panel reads it.
type uiEvent struct {
	Type       string `json:"type"`
	Content    string `json:"content"`
	ToolName   string `json:"tool_name"`
	ToolCallID string `json:"tool_call_id"`
	ToolOutput string `json:"tool_output"`
	Error      string `json:"error"`
	SessionID  string `json:"session_id"`
	ToolCall   *struct {
		ID string `json:"id"`
	} `json:"tool_call"`
}

// stream posts a message as the chat panel does and reads the answer as
// it does: the status first (a non-2xx shows message), then lines split
// on "\n", only "data: " lines, heartbeats skipped, until the first done or
// error.
func (u *webUI) stream(projectID string, body map[string]any) (int, string, []uiEvent) {
	u.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, u.url+"/v3/copilot/projects/"+projectID+"/chat/stream", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, uiMessage(msg), nil
	}
	var evs []uiEvent
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok {
			var ev uiEvent
			if jerr := json.Unmarshal([]byte(data), &ev); jerr != nil {
				u.t.Fatalf("the UI cannot parse %q: %v", data, jerr)
			}
			if ev.Type != "heartbeat" {
				evs = append(evs, ev)
			}
			if ev.Type == "done" || ev.Type == "error" {
				return resp.StatusCode, "", evs
			}
		}
		if err != nil {
			u.t.Fatalf("stream ended without done or error: %v after %+v", err, evs)
		}
	}
}

// uiNumericOffset is the UI's test for a time that already has an offset.
var uiNumericOffset = regexp.MustCompile(`[+-]\d{2}:\d{2}$`)

// uiDate reads a time as the UI's formatter does: "Z" appended unless the
// value ends in a numeric offset; an unparsable result is "Invalid Date".
func uiDate(t *testing.T, what, v string) time.Time {
	t.Helper()
	s := v
	if !uiNumericOffset.MatchString(s) {
		s += "Z"
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s %q reads as Invalid Date in the web UI", what, v)
	}
	return at
}

// readableError checks a refusal as the UI shows it: a sentence, at most
// 300 characters, no JSON inside.
func readableError(t *testing.T, what, msg string) {
	t.Helper()
	if msg == "" || len(msg) > 300 || strings.ContainsAny(msg, "{}") {
		t.Errorf("%s: the UI shows %q (want a sentence of at most 300 characters without JSON)", what, msg)
	}
}

// uiSession is what the session list reads of a ChatSession.
type uiSession struct {
	ThreadID  string         `json:"thread_id"`
	Title     string         `json:"title"`
	Pinned    bool           `json:"pinned"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
	Metadata  map[string]any `json:"metadata"`
}

// uiMessageView is a history message as the UI folds it.
type uiMessageView struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	Name       string `json:"name"`
	ToolCallID string `json:"tool_call_id"`
	CreatedAt  string `json:"created_at"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func TestWebUIContract(t *testing.T) {
	llm := llmtest.NewServer(t)
	fake := gns3test.NewServer(t, nil)
	fake.SeedTemplates()
	// Alice holds Group.Audit (GNS3 then lists her groups, which is how a
	// group's configurations reach her) and Group.Modify on the staff
	// group; dave holds nothing.
	staff := fake.AddGroup("staff", "alice", "dave")
	alice := fake.AddUser(gns3test.User{Username: "alice", Email: "alice@example.com", Privileges: []string{"Group.Audit"},
		ACL: map[string][]string{"/access/groups/" + staff: {"Group.Modify"}}})
	fake.AddUser(gns3test.User{Username: "dave"})
	project := fake.AddProject("ospf-lab", gns3.StatusOpened)
	closed := fake.AddProject("archive", gns3.StatusClosed)
	verifier, err := auth.NewJWTVerifier([]byte(webUISecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(sub string) string {
		tok, err := verifier.Issue(sub, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// Each token is issued once: one issued in another second differs, and
	// the fake would refuse it.
	aliceTok, carolTok, daveTok := issue("alice"), issue("carol"), issue("dave")
	fake.SetAuthorizer(gns3test.AcceptTokens(aliceTok, carolTok, daveTok))
	url, _, _, _ := start(t, map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": webUISecret, "ENCRYPTION_KEY": newKeyB64(t),
		"GNS3_URL": fake.URL, "HEARTBEAT_SECONDS": "1",
		// The scripted LLM listens on loopback: a user's configuration may
		// reach it only when the operator allows it.
		"LLM_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32",
		"MAX_TURNS_PER_USER":      "2",
	})
	ui := &webUI{t: t, url: url, gns3: fake.URL, token: aliceTok}

	// The UI learns its user from GNS3.
	req, _ := http.NewRequest(http.MethodGet, fake.URL+"/v3/access/users/me", nil)
	req.Header.Set("Authorization", "Bearer "+ui.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me struct {
		UserID string `json:"user_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if me.UserID != alice.UserID {
		t.Fatalf("GNS3 me: %+v", me)
	}
	ui.userID = me.UserID
	profiles := "/v3/access/users/" + ui.userID + "/llm-model-configs"

	// Its AI-profile page loads, then creates a flat-bodied configuration
	// with the dialog's extra keys, and makes it the default.
	var list struct {
		Configs       []map[string]any `json:"configs"`
		DefaultConfig map[string]any   `json:"default_config"`
		Total         int              `json:"total"`
	}
	ui.json(http.MethodGet, profiles, nil, http.StatusOK, &list)
	if list.Total != 0 || list.DefaultConfig != nil {
		t.Fatalf("a new user's profiles: %+v", list)
	}
	var created map[string]any
	ui.json(http.MethodPost, profiles, map[string]any{
		"name": "lab model", "model_type": "text", "provider": "openai", "base_url": llm.BaseURL(), "model": "lab-model",
		"temperature": 0.3, "context_limit": 64, "context_strategy": "balanced", "copilot_mode": "lab_automation_assistant",
		"api_key": "sk-webui-contract-0000", "reasoning_effort": "low", "top_k": 20,
	}, http.StatusCreated, &created)
	configID, _ := created["config_id"].(string)
	uiDate(t, "config created_at", fmt.Sprint(created["created_at"]))
	uiDate(t, "config updated_at", fmt.Sprint(created["updated_at"]))
	ui.json(http.MethodPut, profiles+"/default/"+configID, map[string]any{}, http.StatusOK, nil)
	ui.json(http.MethodGet, profiles, nil, http.StatusOK, &list)
	if list.DefaultConfig == nil || list.DefaultConfig["config_id"] != configID {
		t.Fatalf("default after set: %+v", list.DefaultConfig)
	}
	if cfg, _ := list.DefaultConfig["config"].(map[string]any); cfg["copilot_mode"] != "lab_automation_assistant" || cfg["reasoning_effort"] != "low" {
		t.Fatalf("the panel reads the mode and extra keys from default_config: %+v", list.DefaultConfig)
	}

	// A first message with a session id the UI made: a tool card, then
	// the answer.
	title := llmtest.Reply{Text: "OSPF lab"}
	llm.SetDefault(title)
	llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_topo", Name: "gns3_topology_reader", Arguments: `{}`}}},
		llmtest.Reply{Text: "The lab is empty."},
	)
	sid := uuid.NewString()
	st, msg, evs := ui.stream(project, map[string]any{"message": "what is in my lab?", "session_id": sid})
	if st != http.StatusOK {
		t.Fatalf("stream: %d %s", st, msg)
	}
	if last := evs[len(evs)-1]; last.Type != "done" {
		t.Fatalf("first turn ended with %+v", last)
	}
	card := map[string][]string{}
	var answer strings.Builder
	for _, e := range evs {
		switch e.Type {
		case "tool_call":
			card[e.ToolCall.ID] = append(card[e.ToolCall.ID], "call")
		case "tool_start", "tool_end":
			card[e.ToolCallID] = append(card[e.ToolCallID], e.Type)
		case "content":
			answer.WriteString(e.Content)
		}
		if e.SessionID != sid {
			t.Fatalf("event %s of session %q, want the UI's %s", e.Type, e.SessionID, sid)
		}
	}
	if c := card["call_topo"]; len(c) < 3 || c[len(c)-2] != "tool_start" || c[len(c)-1] != "tool_end" {
		t.Fatalf("tool card events %v", c)
	}
	if answer.String() != "The lab is empty." {
		t.Fatalf("answer %q", answer.String())
	}
	firstTools := toolsOf(llm.Requests()[0])

	// The session list after done: no query, as the UI sends it.
	var sessions []uiSession
	ui.json(http.MethodGet, "/v3/copilot/projects/"+project+"/chat/sessions", nil, http.StatusOK, &sessions)
	if len(sessions) != 1 || sessions[0].ThreadID != sid {
		t.Fatalf("session list %+v", sessions)
	}
	created0 := uiDate(t, "session created_at", sessions[0].CreatedAt)
	if updated := uiDate(t, "session updated_at", sessions[0].UpdatedAt); updated.Before(created0) || time.Since(updated) > time.Hour {
		t.Fatalf("session times %s / %s", sessions[0].CreatedAt, sessions[0].UpdatedAt)
	}
	if sessions[0].Metadata["copilot_mode"] != "lab_automation_assistant" {
		t.Fatalf("session mode %v", sessions[0].Metadata)
	}

	// History: every tool message folds into the card of the assistant's
	// call of the same id and name.
	var hist struct {
		Messages []uiMessageView `json:"messages"`
	}
	ui.json(http.MethodGet, "/v3/copilot/projects/"+project+"/chat/sessions/"+sid+"/history", nil, http.StatusOK, &hist)
	calls := map[string]string{}
	var folded int
	for _, m := range hist.Messages {
		uiDate(t, "message created_at", m.CreatedAt)
		for _, c := range m.ToolCalls {
			calls[c.ID] = c.Function.Name
		}
		if m.Role == "tool" {
			if calls[m.ToolCallID] == "" || calls[m.ToolCallID] != m.Name {
				t.Fatalf("tool message %s (%s) has no card to fold into: calls %v", m.ToolCallID, m.Name, calls)
			}
			folded++
		}
	}
	if folded != 1 {
		t.Fatalf("history folds %d tool messages, want 1: %+v", folded, hist.Messages)
	}

	// The mode switch edits the default configuration: the open session's
	// next message runs in the new mode.
	ui.json(http.MethodPut, profiles+"/"+configID, map[string]any{"copilot_mode": "teaching_assistant"}, http.StatusOK, nil)
	llm.Enqueue(llmtest.Reply{Text: "Here is how to read it."})
	n := len(llm.Requests())
	if st, msg, evs = ui.stream(project, map[string]any{"message": "explain it", "session_id": sid}); st != http.StatusOK || evs[len(evs)-1].Type != "done" {
		t.Fatalf("second turn: %d %s %+v", st, msg, evs)
	}
	secondTools := toolsOf(llm.Requests()[n])
	if !slices.Contains(firstTools, "delete_gns3_node") || slices.Contains(secondTools, "delete_gns3_node") ||
		slices.Contains(secondTools, "execute_multiple_device_config_commands") {
		t.Fatalf("tools: lab mode %v, then teaching %v", firstTools, secondTools)
	}

	// Rename, pin, unpin, delete, as the list's menu does.
	base := "/v3/copilot/projects/" + project + "/chat/sessions/" + sid
	var s uiSession
	ui.json(http.MethodPatch, base, map[string]any{"title": "My OSPF lab"}, http.StatusOK, &s)
	if s.Title != "My OSPF lab" {
		t.Fatalf("rename %+v", s)
	}
	ui.json(http.MethodPut, base+"/pin", nil, http.StatusOK, &s)
	if !s.Pinned {
		t.Fatalf("pin %+v", s)
	}
	ui.json(http.MethodDelete, base+"/pin", nil, http.StatusOK, &s)
	if s.Pinned {
		t.Fatalf("unpin %+v", s)
	}
	ui.json(http.MethodDelete, base, nil, http.StatusNoContent, nil)
	ui.json(http.MethodGet, "/v3/copilot/projects/"+project+"/chat/sessions", nil, http.StatusOK, &sessions)
	if len(sessions) != 0 {
		t.Fatalf("after delete %+v", sessions)
	}

	// Refusals the UI meets, as it shows them.
	st, msg, _ = ui.stream(closed, map[string]any{"message": "hi", "session_id": uuid.NewString()})
	if st != http.StatusForbidden {
		t.Fatalf("closed project: %d %s", st, msg)
	}
	readableError(t, "closed project", msg)
	t.Logf("closed project: %q", msg)

	carol := &webUI{t: t, url: url, gns3: fake.URL, token: carolTok}
	fake.AddUser(gns3test.User{Username: "carol"})
	st, msg, _ = carol.stream(project, map[string]any{"message": "hi", "session_id": uuid.NewString()})
	if st != http.StatusBadRequest || !strings.Contains(msg, "LLM configuration not found") {
		t.Fatalf("no LLM configured: %d %q", st, msg)
	}
	readableError(t, "no LLM configured", msg)

	// A session busy with a turn (409), then a user at the cap of turns at
	// once (429): both read as sentences.
	held := make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(held) })
	llm.SetHandler(func(r llmtest.Request) llmtest.Reply {
		if r.Stream {
			<-held
		}
		return title
	})
	done := make(chan struct{}, 2)
	hold := func(id string) {
		before := len(llm.Requests())
		go func() {
			defer func() { done <- struct{}{} }()
			ui.stream(project, map[string]any{"message": "a long one", "session_id": id})
		}()
		for deadline := time.Now().Add(30 * time.Second); len(llm.Requests()) == before; {
			if time.Now().After(deadline) {
				t.Fatal("the held turn never reached the LLM")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	busy := uuid.NewString()
	hold(busy)
	st, msg, _ = ui.stream(project, map[string]any{"message": "again", "session_id": busy})
	if st != http.StatusConflict {
		t.Fatalf("busy session: %d %q", st, msg)
	}
	readableError(t, "busy session", msg)
	t.Logf("busy session: %q", msg)
	hold(uuid.NewString())
	st, msg, _ = ui.stream(project, map[string]any{"message": "a third", "session_id": uuid.NewString()})
	if st != http.StatusTooManyRequests {
		t.Fatalf("turns at once: %d %q", st, msg)
	}
	readableError(t, "turns at once", msg)
	t.Logf("turns at once: %q", msg)
	release.Do(func() { close(held) })
	<-done
	<-done
	llm.SetHandler(nil)

	// The group tab, with GNS3 tokens alone. Its six calls: list, create,
	// update, set default, unset default, delete.
	dave := &webUI{t: t, url: url, gns3: fake.URL, token: daveTok}
	group := "/v3/access/groups/" + staff + "/llm-model-configs"
	var glist struct {
		Configs []map[string]any `json:"configs"`
		Total   int              `json:"total"`
	}
	ui.json(http.MethodGet, group, nil, http.StatusOK, &glist)
	var gcfg map[string]any
	ui.json(http.MethodPost, group, map[string]any{"name": "team model", "provider": "openai", "base_url": llm.BaseURL(),
		"model": "team-model", "context_limit": 64, "api_key": "sk-team-0000"}, http.StatusCreated, &gcfg)
	gid, _ := gcfg["config_id"].(string)
	ui.json(http.MethodPut, group+"/"+gid, map[string]any{"temperature": 0.1}, http.StatusOK, nil)
	ui.json(http.MethodPut, group+"/default/"+gid, map[string]any{}, http.StatusOK, nil)
	ui.json(http.MethodPut, group+"/"+gid, map[string]any{"is_default": false}, http.StatusOK, nil)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, group}, {http.MethodPost, group}, {http.MethodPut, group + "/" + gid},
		{http.MethodPut, group + "/default/" + gid}, {http.MethodDelete, group + "/" + gid},
	} {
		st, b := dave.call(c.method, c.path, map[string]any{"name": "x", "provider": "openai", "model": "m"})
		if st != http.StatusForbidden {
			t.Fatalf("dave %s %s: %d %s", c.method, c.path, st, b)
		}
		readableError(t, "group tab without the privilege", uiMessage(b))
	}

	// The chat panel's model picker makes the group's configuration
	// alice's default, by reference: a group edit reaches her.
	ui.json(http.MethodPut, profiles+"/default/"+gid, map[string]any{}, http.StatusOK, nil)
	ui.json(http.MethodGet, profiles, nil, http.StatusOK, &list)
	if list.DefaultConfig == nil || list.DefaultConfig["config_id"] != gid {
		t.Fatalf("default after picking the group's: %+v", list.DefaultConfig)
	}
	ui.json(http.MethodPut, group+"/"+gid, map[string]any{"model": "team-model-2"}, http.StatusOK, nil)
	llm.Enqueue(llmtest.Reply{Text: "from the team model"})
	n = len(llm.Requests())
	if st, msg, evs = ui.stream(project, map[string]any{"message": "hello", "session_id": uuid.NewString()}); st != http.StatusOK || evs[len(evs)-1].Type != "done" {
		t.Fatalf("turn on the group's configuration: %d %s %+v", st, msg, evs)
	}
	if m := llm.Requests()[n].Model; m != "team-model-2" {
		t.Fatalf("the turn ran on %q, want the group's edited model", m)
	}
	ui.json(http.MethodDelete, group+"/"+gid, nil, http.StatusNoContent, nil)
	ui.json(http.MethodPut, profiles+"/default/"+configID, map[string]any{}, http.StatusOK, nil)

	llm.Enqueue(llmtest.Reply{Status: http.StatusUnauthorized, Error: "Incorrect API key provided: sk-webu****0000.", ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key"})
	st, msg, evs = ui.stream(project, map[string]any{"message": "hi", "session_id": uuid.NewString()})
	switch {
	case st != http.StatusOK:
		readableError(t, "provider 401 before the stream", msg)
	case evs[len(evs)-1].Type != "error":
		t.Fatalf("provider 401: the stream ended with %+v", evs[len(evs)-1])
	default:
		readableError(t, "provider 401 in the stream", evs[len(evs)-1].Error)
		t.Logf("provider 401: %q", evs[len(evs)-1].Error)
	}
}

// toolsOf lists the tool names an LLM request offered.
func toolsOf(r llmtest.Request) []string {
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}
