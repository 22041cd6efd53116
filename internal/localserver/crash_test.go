package localserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"
	"agentchat/internal/syncbuf"
)

// Crash safety: the local server, built and run as a child process, is
// killed with SIGKILL in the middle of a turn (while the model streams its
// answer, or while a tool runs), then started again on the same store. What
// every completed step stored is there, nothing half-written is visible,
// the session takes a next turn once the dead turn's lease is freed (by an
// abort, or by its expiry), the cut turn is counted at most once and
// message_count is the number of stored messages.

// crashDeadline bounds every wait of these tests: it only detects hangs.
const crashDeadline = 90 * time.Second

// crashPartial is the answer the model is cut in: its words must never be
// stored.
const crashPartial = "zebra quokka narwhal axolotl pangolin okapi tapir wombat"

// crashReply is the answer of the model once the server is back.
const crashReply = "Back on track."

// TestCrashSafety kills the server during a turn, on SQLite and on DynamoDB
// (dynalite, killed and started again on its data directory as well).
func TestCrashSafety(t *testing.T) {
	bin := buildLocalServer(t)
	for _, tc := range []struct {
		store string // "sqlite" or "dynamodb"
		cut   string // "stream": during the answer; "tool": during a tool run
		free  string // "abort": the session is freed by an abort; "expiry": by the lease's expiry
	}{
		{"sqlite", "stream", "abort"},
		{"sqlite", "stream", "expiry"},
		{"sqlite", "tool", "abort"},
		{"sqlite", "tool", "expiry"},
		{"dynamodb", "stream", "abort"},
		{"dynamodb", "tool", "expiry"},
	} {
		t.Run(tc.store+"/"+tc.cut+"/"+tc.free, func(t *testing.T) {
			t.Parallel()
			runCrash(t, bin, tc.store, tc.cut, tc.free)
		})
	}
}

func runCrash(t *testing.T, bin, storeKind, cut, free string) {
	llm := llmtest.NewServer(t)
	lab := gns3test.NewServer(t, nil)
	project := lab.AddProject("lab", gns3.StatusOpened)
	pc := lab.AddNode(project, gns3test.VPCSNode(project, "PC1", "stopped", 5001, 0, 0))
	lab.SetTransitionDelay(pc, time.Hour) // start_gns3_node waits for as long as the turn lives

	// The cut turn: a completed tool step, then the step the kill lands in.
	llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_topo", Name: "gns3_topology_reader", Arguments: `{}`}}})
	switch cut {
	case "stream":
		llm.Enqueue(llmtest.Reply{Text: crashPartial + " " + strings.Repeat("more ", 50), ChunkDelay: 20 * time.Millisecond, Hang: true, HangAfter: 5})
	case "tool":
		llm.Enqueue(llmtest.Reply{Text: "Starting PC1.", ToolCalls: []llmtest.ToolCall{{ID: "call_start", Name: "start_gns3_node", Arguments: `{"nodes":["PC1"]}`}}})
	}
	llm.SetDefault(llmtest.Reply{Text: crashReply}) // the turns after the restart, and their title

	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "GNS3_URL": lab.URL,
		"OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "sk-test-llm-key", "OPENAI_MODEL": "test-model",
		"HEARTBEAT_SECONDS": "1",
	}
	// A short lease frees the session soon after the kill; a long one
	// holds it for as long as the test may take, so that only the abort
	// frees it.
	vars["TURN_LEASE_SECONDS"] = map[string]string{"expiry": "2", "abort": "900"}[free]
	var dyn *dynalite
	if storeKind == "dynamodb" {
		dyn = startDynalite(t, filepath.Join(t.TempDir(), "dynalite"))
		vars["STORE"], vars["TABLE_NAME"], vars["DYNAMODB_ENDPOINT"] = "dynamodb", "agentchat", dyn.srv.Endpoint()
	}

	srv := startChild(t, bin, vars)
	c := &crashClient{t: t, project: project}
	c.url = srv.url
	sid := uuid.NewString()

	// The cut turn runs until the moment of the kill.
	events, closeStream := c.openStream(sid, "check my lab and start PC1")
	defer closeStream()
	committed := []string{"user", "assistant(call_topo)", "tool(call_topo)"}
	contents, toolDone, reached := 0, false, false
	for ev := range events {
		switch {
		case ev.Type == "error" || ev.Type == "done":
			t.Fatalf("the turn ended before the kill: %+v", ev)
		case ev.Type == "tool_end" && ev.ToolCallID == "call_topo":
			toolDone = true
		case ev.Type == "content" && toolDone:
			contents++
		}
		if cut == "stream" && contents >= 3 || cut == "tool" && ev.Type == "tool_start" && ev.ToolCallID == "call_start" {
			reached = true
			break
		}
	}
	if !reached {
		t.Fatalf("the stream ended before the moment of the kill")
	}
	if cut == "tool" {
		committed = append(committed, "assistant(call_start)")
	}
	// Every completed step is committed before the kill (the user message
	// is stored beside the first LLM call, each step when it ends).
	c.waitHistory(sid, len(committed))
	srv.kill()
	closeStream()
	if dyn != nil {
		dyn.restart(t)
		vars["DYNAMODB_ENDPOINT"] = dyn.srv.Endpoint()
	}

	srv = startChild(t, bin, vars)
	c.url = srv.url
	hist := c.history(sid)
	if got, want := roles(hist), strings.Join(committed, " "); got != want {
		t.Fatalf("history after the crash:\n got %s\nwant %s", got, want)
	}
	for _, m := range hist {
		if strings.Contains(m.Content, "zebra") || m.Role == "tool" && m.ToolCallID == "call_start" {
			t.Fatalf("a half-written message is visible: %+v", m)
		}
	}
	if s := c.session(sid); s.MessageCount > int64(len(hist)) {
		t.Fatalf("message_count %d > %d stored messages after the crash", s.MessageCount, len(hist))
	}

	// The dead turn's lease holds the session until an abort or its expiry.
	if free == "abort" {
		if st, _ := c.turn(sid, "are you there?"); st != http.StatusConflict {
			t.Fatalf("a turn on the session of the dead turn: %d, want 409 before the abort", st)
		}
		if st := c.abort(sid); st != http.StatusAccepted {
			t.Fatalf("abort: %d", st)
		}
	}
	evs := c.waitTurn(sid, "are you there?")
	checkAnswered(t, evs)

	want := append([]string{}, committed...)
	if cut == "tool" {
		want = append(want, "tool(call_start)") // the repair of the call that never returned
	}
	want = append(want, "user", "assistant")
	hist = c.history(sid)
	if got := roles(hist); got != strings.Join(want, " ") {
		t.Fatalf("history after the next turn:\n got %s\nwant %s", got, strings.Join(want, " "))
	}
	s := c.session(sid)
	if s.MessageCount != int64(len(hist)) {
		t.Fatalf("message_count %d, but %d messages are stored", s.MessageCount, len(hist))
	}
	// The cut turn wrote no statistics; the next one counted itself once.
	if s.Stats.Turns < 1 || s.Stats.Turns > 2 || s.Stats.ToolCalls["gns3_topology_reader"] > 1 ||
		s.Stats.ToolCalls["start_gns3_node"] > 1 || s.LLMCallsCount < 1 {
		t.Fatalf("statistics count the cut turn more than once: %+v, %d LLM calls", s.Stats, s.LLMCallsCount)
	}

	// No session is left unusable: the next turn released its lease.
	st, evs := c.turn(sid, "and now?")
	if st != http.StatusOK {
		t.Fatalf("a turn right after the recovered one: %d", st)
	}
	checkAnswered(t, evs)
	hist = c.history(sid)
	if s := c.session(sid); s.MessageCount != int64(len(hist)) || len(hist) != len(want)+2 {
		t.Fatalf("after one more turn: message_count %d, %d stored messages, want %d", s.MessageCount, len(hist), len(want)+2)
	}
	if got := c.sessionCount(); got != 1 {
		t.Fatalf("%d sessions listed, want 1", got)
	}
}

// checkAnswered fails unless the turn's events hold the scripted answer and
// no error.
func checkAnswered(t *testing.T, evs []crashEvent) {
	t.Helper()
	var text strings.Builder
	for _, e := range evs {
		if e.Type == "error" {
			t.Fatalf("turn failed: %s", e.Error)
		}
		text.WriteString(e.Content)
	}
	if !strings.Contains(text.String(), "track.") {
		t.Fatalf("turn did not answer: %+v", evs)
	}
}

// roles renders a history as "role(call id) ...".
func roles(msgs []crashMessage) string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
		switch {
		case len(m.ToolCalls) > 0:
			out[i] += "(" + m.ToolCalls[0].ID + ")"
		case m.Role == "tool":
			out[i] += "(" + m.ToolCallID + ")"
		}
	}
	return strings.Join(out, " ")
}

// buildLocalServer builds ./functions/local/withdynamo, the local server
// that serves SQLite and DynamoDB (CGO_ENABLED=0), into a temporary
// directory and returns the binary's path.
func buildLocalServer(t *testing.T) string {
	t.Helper()
	return buildCommand(t, "agentchat/functions/local/withdynamo")
}

// buildCommand builds the command pkg (CGO_ENABLED=0) into a temporary
// directory and returns the binary's path.
func buildCommand(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentchat")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// child is a local server running as a child process.
type child struct {
	cmd    *exec.Cmd
	url    string
	logs   *syncbuf.Buffer
	exited chan struct{}
}

// startChild starts the server binary with exactly vars as its
// environment and waits for its listening line; it is killed at the end of
// the test at the latest.
func startChild(t *testing.T, bin string, vars map[string]string) *child {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &child{cmd: cmd, logs: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the server: %v", err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "agentchat listening on "); ok {
				addr <- u
			}
		}
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.kill()
		if t.Failed() {
			t.Logf("server logs (pid %d):\n%s", cmd.Process.Pid, c.logs.String())
		}
	})
	select {
	case c.url = <-addr:
	case <-c.exited:
		t.Fatalf("the server exited at start:\n%s", c.logs.String())
	case <-time.After(crashDeadline):
		t.Fatalf("the server did not start:\n%s", c.logs.String())
	}
	return c
}

// kill ends the process with SIGKILL and waits for it to exit.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// dynalite is a persistent emulator that a test can kill and start again.
type dynalite struct {
	dir string
	srv *dynalitetest.Server
}

func startDynalite(t *testing.T, dir string) *dynalite {
	t.Helper()
	d := &dynalite{dir: dir}
	d.launch(t)
	t.Cleanup(func() { _ = d.srv.Stop() })
	return d
}

func (d *dynalite) launch(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), crashDeadline)
	defer cancel()
	srv, err := dynalitetest.LaunchPersistent(ctx, d.dir)
	if err != nil {
		t.Fatalf("dynalite: %v", err)
	}
	d.srv = srv
}

// restart kills the emulator (SIGKILL) and starts it again on its data.
func (d *dynalite) restart(t *testing.T) {
	t.Helper()
	if err := d.srv.Stop(); err != nil {
		t.Fatalf("kill dynalite: %v", err)
	}
	d.launch(t)
}

// crashEvent is one event of the project stream.
type crashEvent struct {
	Type       string `json:"type"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	Error      string `json:"error"`
}

// crashMessage is one message of a history.
type crashMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

// crashSession is the part of a listed session the tests read.
type crashSession struct {
	ThreadID      string `json:"thread_id"`
	MessageCount  int64  `json:"message_count"`
	LLMCallsCount int64  `json:"llm_calls_count"`
	Stats         struct {
		ToolCalls map[string]int64 `json:"tool_calls"`
		Turns     int64            `json:"turns"`
	} `json:"stats"`
}

// crashClient talks to the server of a test (single-user mode).
type crashClient struct {
	t       *testing.T
	url     string
	project string
}

func (c *crashClient) base() string { return c.url + "/v3/projects/" + c.project + "/chat" }

// get decodes the JSON answer of a GET into v.
func (c *crashClient) get(path string, v any) {
	c.t.Helper()
	resp, err := http.Get(c.base() + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		c.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

func (c *crashClient) history(sid string) []crashMessage {
	c.t.Helper()
	var h struct {
		Messages []crashMessage `json:"messages"`
	}
	c.get("/sessions/"+sid+"/history?limit=1000", &h)
	return h.Messages
}

func (c *crashClient) sessions() []crashSession {
	c.t.Helper()
	var list []crashSession
	c.get("/sessions?limit=100", &list)
	return list
}

// session returns the listed session sid (its counters as the list shows
// them).
func (c *crashClient) session(sid string) crashSession {
	c.t.Helper()
	for _, s := range c.sessions() {
		if s.ThreadID == sid {
			return s
		}
	}
	c.t.Fatalf("session %s is not listed", sid)
	return crashSession{}
}

func (c *crashClient) sessionCount() int {
	c.t.Helper()
	return len(c.sessions())
}

// waitHistory polls the history until it holds n messages.
func (c *crashClient) waitHistory(sid string, n int) {
	c.t.Helper()
	deadline := time.Now().Add(crashDeadline)
	for {
		if h := c.history(sid); len(h) >= n {
			return
		} else if time.Now().After(deadline) {
			c.t.Fatalf("history holds %d messages, want %d: %s", len(h), n, roles(h))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *crashClient) abort(sid string) int {
	c.t.Helper()
	resp, err := http.Post(c.base()+"/sessions/"+sid+"/abort", "application/json", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// openStream starts a turn and delivers its events until the stream ends
// (done, or the connection is cut); closeStream ends it from this side.
func (c *crashClient) openStream(sid, msg string) (events <-chan crashEvent, closeStream func()) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := json.Marshal(map[string]any{"message": msg, "session_id": sid})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base()+"/stream", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	ch := make(chan crashEvent, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev crashEvent
			if json.Unmarshal([]byte(data), &ev) != nil {
				ev = crashEvent{Type: "error", Error: "bad event: " + data}
			}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Type == "done" {
				return
			}
		}
	}()
	return ch, cancel
}

// turn runs a turn to its end; a refused turn returns its status and no
// events.
func (c *crashClient) turn(sid, msg string) (int, []crashEvent) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"message": msg, "session_id": sid})
	resp, err := http.Post(c.base()+"/stream", "application/json", bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	var evs []crashEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev crashEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			c.t.Fatalf("bad event %q: %v", data, err)
		}
		evs = append(evs, ev)
		if ev.Type == "done" {
			return resp.StatusCode, evs
		}
	}
	c.t.Fatalf("stream ended without done: %+v (%v)", evs, sc.Err())
	return 0, nil
}

// waitTurn retries a turn refused with 409 (the session still leased by the
// dead turn) until it runs, and returns its events.
func (c *crashClient) waitTurn(sid, msg string) []crashEvent {
	c.t.Helper()
	deadline := time.Now().Add(crashDeadline)
	for {
		st, evs := c.turn(sid, msg)
		switch {
		case st == http.StatusOK:
			return evs
		case st != http.StatusConflict:
			c.t.Fatalf("turn after the crash: status %d", st)
		case time.Now().After(deadline):
			c.t.Fatalf("the session is still busy %s after the restart", crashDeadline)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
