package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
	"agentchat/internal/store/storetest"
)

const (
	project = "9f1d8e4a-5b6c-4d7e-8f90-a1b2c3d4e5f6"
	apiKey  = "sk-chat-test-SECRET-abcdefghijklmnop"
	agentID = "lab-tester"
)

var discard = slog.New(slog.DiscardHandler)

// env is a server with the chat and session routes over a real SQLite
// file, a scripted LLM and a test agent with a "ping" tool.
type env struct {
	*apitest.Env
	llm      *llmtest.Server
	resolver *switchResolver
}

type switchResolver struct {
	mu sync.Mutex
	c  llm.Client
}

func (s *switchResolver) Resolve(context.Context, string) (llm.Resolved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return llm.Resolved{}, llm.ErrNotConfigured
	}
	return llm.Resolved{Client: s.c}, nil
}

func (s *switchResolver) set(c llm.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c = c
}

func newLLMClient(t testing.TB, baseURL string, timeout time.Duration) llm.Client {
	c, err := llm.NewClient(llm.Config{APIKey: apiKey, BaseURL: baseURL, Model: "test-model", CallTimeout: timeout, MaxRetries: -1}, llm.WithLogger(discard))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pingTool() agent.Tool {
	return agent.Tool{
		Name:        "ping",
		Description: "Ping a node",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"node":{"type":"string"}},"required":["node"]}`),
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a struct{ Node string }
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			return "64 bytes from " + a.Node + ": icmp_seq=1 ttl=64", nil
		},
	}
}

func newEnv(t *testing.T, heartbeat time.Duration) *env {
	t.Helper()
	return newEnvOpts(t, heartbeat, apitest.Options{}, nil)
}

// newEnvOpts is newEnv with apitest options (a store of the test's own),
// wrap, when not nil, around the handler of every route, and mods applied
// to the chat options.
func newEnvOpts(t *testing.T, heartbeat time.Duration, opts apitest.Options, wrap func(http.HandlerFunc) http.HandlerFunc, mods ...func(*chat.Options)) *env {
	t.Helper()
	srv := llmtest.NewServer(t)
	res := &switchResolver{c: newLLMClient(t, srv.BaseURL(), 5*time.Second)}
	reg := agent.NewRegistry(agentID)
	reg.Register(&agent.Agent{ID: agentID, SystemPrompt: "You are a lab tester.", Skills: []agent.Skill{{Name: "net", Tools: []agent.Tool{pingTool()}}}})
	e := apitest.New(t, opts, func(st store.Store, a *auth.Authenticator) []httpapi.Route {
		rt := agent.NewRuntime(agent.Options{Store: st, Agents: reg, LLM: res, Logger: discard, AbortPoll: 20 * time.Millisecond, TurnTimeout: 30 * time.Second})
		co := chat.Options{Runtime: rt, Heartbeat: heartbeat, AgentID: agentID}
		for _, m := range mods {
			m(&co)
		}
		ch := chat.New(co)
		routes := append(ch.Routes(), sessions.New(st, nil, nil).Routes()...)
		if wrap != nil {
			for i := range routes {
				routes[i].Handler = wrap(routes[i].Handler)
			}
		}
		return routes
	})
	return &env{Env: e, llm: srv, resolver: res}
}

func path(p string) string { return "/v3/projects/" + project + "/chat" + p }

func types(events []map[string]any) string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprint(e["type"]))
	}
	return strings.Join(out, ",")
}

func TestStreamAnswer(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Text: "R1 and R2 are linked.", Usage: &llmtest.Usage{PromptTokens: 30, CompletionTokens: 6}})
	e.llm.Enqueue(llmtest.Reply{Text: "Link check", Usage: &llmtest.Usage{PromptTokens: 12, CompletionTokens: 2}})
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "Are R1 and R2 linked?"})
	if s.Status != http.StatusOK || s.Header.Get("Content-Type") != "text/event-stream" || s.Header.Get("X-Accel-Buffering") != "no" || s.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("status %d headers %v", s.Status, s.Header)
	}
	sid := s.Header.Get("X-Session-Id")
	events := s.All(t)
	if s.Comments == 0 {
		t.Error("the stream must open with a comment")
	}
	var content strings.Builder
	contentEvents := 0
	for _, ev := range events {
		if ev["session_id"] != sid {
			t.Fatalf("event without the session id: %v", ev)
		}
		if ev["type"] == "content" {
			contentEvents++
			content.WriteString(ev["content"].(string))
			if ev["message_id"] == "" {
				t.Fatalf("content without message_id: %v", ev)
			}
		}
	}
	if content.String() != "R1 and R2 are linked." || contentEvents < 5 {
		t.Fatalf("content %q in %d events (want word by word): %s", content.String(), contentEvents, types(events))
	}
	if events[len(events)-1]["type"] != "done" {
		t.Fatalf("last event %v", events[len(events)-1])
	}

	// Second turn: the model sees the first exchange.
	e.llm.Enqueue(llmtest.Reply{Text: "Yes, still linked.", Usage: &llmtest.Usage{PromptTokens: 50, CompletionTokens: 4}})
	s = e.OpenStream("alice", path("/stream"), map[string]any{"message": "Still?", "session_id": sid})
	if got := types(s.All(t)); !strings.HasSuffix(got, "done") {
		t.Fatalf("second turn: %s", got)
	}
	reqs := e.llm.Requests()
	last := reqs[len(reqs)-1]
	var roles []string
	for _, m := range last.Messages {
		roles = append(roles, m.Role+":"+m.Content)
	}
	joined := strings.Join(roles, "|")
	if !strings.Contains(joined, "user:Are R1 and R2 linked?|assistant:R1 and R2 are linked.|user:Still?") {
		t.Fatalf("second call lacks the first exchange: %s", joined)
	}
	if strings.Contains(joined, apiKey) {
		t.Fatal("the API key reached the prompt")
	}

	// Statistics: 2 user + 2 assistant messages; 3 LLM calls (2 + title).
	r := e.As("alice", http.MethodGet, path("/sessions"), nil)
	var list []sessions.ChatSession
	r.JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("sessions: %s", r.Body)
	}
	got := list[0]
	if got.MessageCount != 4 || got.LLMCallsCount != 3 || got.InputTokens != 30+12+50 || got.OutputTokens != 6+2+4 || got.TotalTokens != 104 || got.Title != "Link check" {
		t.Fatalf("stats: %s", r.Body)
	}
	r = e.As("alice", http.MethodGet, path("/sessions/"+sid+"/history"), nil)
	var h sessions.ConversationHistory
	r.JSON(t, &h)
	if len(h.Messages) != 4 || h.Messages[1].Content != "R1 and R2 are linked." || h.LLMCalls != 3 {
		t.Fatalf("history: %s", r.Body)
	}
}

func TestToolCallEvents(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "call_a", Name: "ping", Arguments: `{"node":"R1"}`},
		{ID: "call_b", Name: "ping", Arguments: `{"node":"R2"}`},
	}})
	e.llm.Enqueue(llmtest.Reply{Text: "Both answer."})
	e.llm.Enqueue(llmtest.Reply{Text: "Pings"})
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "ping R1 and R2", "session_id": "4a7f0d2e-9b1c-4e3d-8a5f-6b7c8d9e0f1a"})
	events := s.All(t)
	calls := map[string][]map[string]any{}
	var starts, ends int
	for _, ev := range events {
		switch ev["type"] {
		case "tool_call":
			tc := ev["tool_call"].(map[string]any)
			calls[tc["id"].(string)] = append(calls[tc["id"].(string)], tc)
		case "tool_start":
			starts++
		case "tool_end":
			ends++
			if !strings.Contains(ev["tool_output"].(string), "64 bytes from") {
				t.Fatalf("tool output: %v", ev)
			}
		}
	}
	if len(calls) != 2 || starts != 2 || ends != 2 {
		t.Fatalf("calls %d starts %d ends %d: %s", len(calls), starts, ends, types(events))
	}
	for id, seq := range calls {
		first, last := seq[0], seq[len(seq)-1]
		fn0, fnN := first["function"].(map[string]any), last["function"].(map[string]any)
		if fn0["arguments"] != "" || fn0["name"] != "ping" || first["type"] != "function" {
			t.Fatalf("%s first event %v", id, first)
		}
		if fnN["complete"] != true || !strings.HasPrefix(fnN["arguments"].(string), `{"node":"R`) {
			t.Fatalf("%s last event %v", id, last)
		}
	}
	if events[len(events)-1]["type"] != "done" {
		t.Fatal("done must be last")
	}
	var list []sessions.ChatSession
	e.As("alice", http.MethodGet, path("/sessions"), nil).JSON(t, &list)
	// user + assistant(tool calls) + 2 tool + assistant
	if list[0].MessageCount != 5 || list[0].Stats.ToolCalls["ping"] != 2 {
		t.Fatalf("stats %+v", list[0])
	}
}

func TestBeforeStreamErrors(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Text: "hi"}, llmtest.Reply{Text: "Greeting"})
	owned := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hi"})
	owned.All(t)
	aliceSession := owned.Header.Get("X-Session-Id")
	tests := []struct {
		name    string
		body    any
		status  int
		message string
	}{
		{"no message", map[string]any{}, 422, "Field 'message' is required"},
		{"blank message", map[string]any{"message": "  "}, 422, "Field 'message' must not be blank"},
		{"message too long", map[string]any{"message": strings.Repeat("a", 32<<10+1)}, 413, "Field 'message' must be at most 32768 bytes (got 32769)"},
		{"bad session id", map[string]any{"message": "x", "session_id": "abc"}, 422, "Invalid session_id: must be a UUID"},
		{"temperature", map[string]any{"message": "x", "temperature": 2.5}, 422, "Field 'temperature' must be between 0 and 2"},
		{"wrong type", map[string]any{"message": 3}, 422, "Field 'message' must be of type string"},
		{"copilot mode", map[string]any{"message": "x", "copilot_mode": "root"}, 422, "Field 'copilot_mode' must be one of: teaching_assistant, lab_automation_assistant"},
		{"malformed", `{"message":`, 400, "Malformed JSON in request body"},
		{"other user's session", map[string]any{"message": "x", "session_id": aliceSession}, 404, "Session '" + aliceSession + "' not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.As("bob", http.MethodPost, path("/stream"), tc.body)
			if r.Status != tc.status || r.Message() != tc.message {
				t.Fatalf("got %d %s, want %d %q", r.Status, r.Body, tc.status, tc.message)
			}
		})
	}
	e.resolver.set(nil)
	r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "x"})
	if r.Status != 400 || r.Message() != chat.MsgLLMNotConfigured {
		t.Fatalf("no LLM: %d %s", r.Status, r.Body)
	}
}

func TestConcurrentTurnAndAbort(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Text: "thinking very hard", Hang: true, HangAfter: 2})
	sid := "0c8e7a6b-5d4c-4b3a-9f1e-2d3c4b5a6978"
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "long one", "session_id": sid})
	first, ok := s.Next(t)
	if !ok || first["type"] != "content" {
		t.Fatalf("first event %v", first)
	}
	r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "meanwhile", "session_id": sid})
	if r.Status != http.StatusConflict {
		t.Fatalf("second turn: %d %s", r.Status, r.Body)
	}
	if r := e.As("bob", http.MethodPost, path("/sessions/"+sid+"/abort"), nil); r.Status != http.StatusNotFound {
		t.Fatalf("bob aborts alice: %d %s", r.Status, r.Body)
	}
	if r := e.As("alice", http.MethodPost, path("/sessions/"+sid+"/abort"), nil); r.Status != http.StatusAccepted {
		t.Fatalf("abort: %d %s", r.Status, r.Body)
	}
	rest := s.All(t)
	if len(rest) == 0 || rest[len(rest)-1]["type"] != "done" {
		t.Fatalf("aborted stream: %s", types(rest))
	}
	select {
	case <-e.llm.Disconnects():
	case <-time.After(10 * time.Second):
		t.Fatal("the LLM call was not cancelled by the abort")
	}
	// The session is free again and keeps what was streamed.
	e.llm.Enqueue(llmtest.Reply{Text: "ok"})
	s = e.OpenStream("alice", path("/stream"), map[string]any{"message": "again", "session_id": sid})
	if got := types(s.All(t)); !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("turn after abort: %s", got)
	}
	var list []sessions.ChatSession
	e.As("alice", http.MethodGet, path("/sessions"), nil).JSON(t, &list)
	if list[0].Stats.AbortedTurns != 1 {
		t.Fatalf("aborted turns: %+v", list[0].Stats)
	}
}

// TestAbortFreesDeadTurn: the instance running a turn crashed, leaving its
// unexpired lease behind. Stop (abort) frees the session once
// store.AbortGrace has passed without the holder reacting.
func TestAbortFreesDeadTurn(t *testing.T) {
	ctx := t.Context()
	clock := new(storetest.Clock)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentchat.db"), sqlite.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnvOpts(t, 0, apitest.Options{Store: st}, nil)

	sid := "5b2f0c1e-7a4d-4e8b-9c3f-1d2e3f4a5b6c"
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hi", "session_id": sid})
	if got := types(s.All(t)); !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("first turn: %s", got)
	}
	// A turn of a crashed instance: the lease is held, nobody renews,
	// releases or watches the abort flag.
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: sid}
	if err := st.AcquireLease(ctx, k, "dead-instance", time.Hour); err != nil {
		t.Fatalf("acquire the dead turn's lease: %v", err)
	}
	again := map[string]any{"message": "are you there?", "session_id": sid}
	if r := e.As("alice", http.MethodPost, path("/stream"), again); r.Status != http.StatusConflict {
		t.Fatalf("turn while the dead lease is held: %d %s", r.Status, r.Body)
	}
	if r := e.As("alice", http.MethodPost, path("/sessions/"+sid+"/abort"), nil); r.Status != http.StatusAccepted {
		t.Fatalf("abort: %d %s", r.Status, r.Body)
	}
	// Within the grace a live holder could still be reacting.
	if r := e.As("alice", http.MethodPost, path("/stream"), again); r.Status != http.StatusConflict {
		t.Fatalf("turn just after the abort: %d %s", r.Status, r.Body)
	}

	clock.Advance(store.AbortGrace + time.Second)
	s = e.OpenStream("alice", path("/stream"), again)
	if s.Status != http.StatusOK {
		t.Fatalf("turn after the abort grace: status %d", s.Status)
	}
	if got := types(s.All(t)); !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("turn after the abort grace: %s", got)
	}
	if err := st.RenewLease(ctx, k, "dead-instance", time.Hour); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("RenewLease by the dead turn = %v, want ErrLeaseLost", err)
	}
	msgs, err := st.ListMessages(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(msgs); n != 4 || msgs[2].Content != "are you there?" {
		t.Fatalf("messages after the takeover: %d %+v", n, msgs)
	}
}

func TestClientHangsUp(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Text: "partial answer that never ends", Hang: true, HangAfter: 3})
	sid := "1d2e3f4a-5b6c-4d7e-8f90-a1b2c3d4e5f7"
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "go", "session_id": sid})
	if ev, ok := s.Next(t); !ok || ev["type"] != "content" {
		t.Fatalf("first event %v", ev)
	}
	s.Close()
	select {
	case <-e.llm.Disconnects():
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request not cancelled after the client left")
	}
	// Statistics land once the turn has persisted; then the next turn runs.
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: sid}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sess, err := e.Store.GetSession(context.Background(), k)
		if err == nil && sess.Stats.AbortedTurns == 1 {
			if sess.MessageCount < 2 {
				t.Fatalf("user message and partial answer not stored: %+v", sess)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("statistics not written after hang-up: %+v %v", sess, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.llm.Enqueue(llmtest.Reply{Text: "back"})
	var got string
	for time.Now().Before(deadline) {
		s = e.OpenStream("alice", path("/stream"), map[string]any{"message": "again", "session_id": sid})
		if s.Status == http.StatusConflict { // lease release still in flight
			s.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		got = types(s.All(t))
		break
	}
	if !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
		t.Fatalf("next turn: %q", got)
	}
}

func TestLLMFailures(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + closed.Addr().String() + "/v1"
	_ = closed.Close()
	tests := []struct {
		name  string
		reply *llmtest.Reply
		url   string
		want  string
	}{
		{"401", &llmtest.Reply{Status: 401, Error: "Incorrect API key provided: " + apiKey}, "", "API key"},
		{"429", &llmtest.Reply{Status: 429, Error: "Rate limit reached"}, "", "rate limit"},
		{"500", &llmtest.Reply{Status: 500, Error: "boom"}, "", "500"},
		{"malformed chunk", &llmtest.Reply{Text: "a b c", Malformed: true, MalformedAfter: 2}, "", "malformed"},
		{"refused", nil, refusedURL, "reach"},
		{"timeout", &llmtest.Reply{Hang: true}, "", "in time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 0)
			timeout := 5 * time.Second
			if tc.name == "timeout" {
				timeout = 300 * time.Millisecond
			}
			url := e.llm.BaseURL()
			if tc.url != "" {
				url = tc.url
			}
			e.resolver.set(newLLMClient(t, url, timeout))
			if tc.reply != nil {
				e.llm.Enqueue(*tc.reply)
			}
			s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hello"})
			sid := s.Header.Get("X-Session-Id")
			events := s.All(t)
			n := len(events)
			if n < 2 || events[n-2]["type"] != "error" || events[n-1]["type"] != "done" {
				t.Fatalf("events: %s", types(events))
			}
			msg := events[n-2]["error"].(string)
			if !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.want)) || strings.Contains(msg, apiKey) || strings.Contains(msg, "<") {
				t.Fatalf("error message %q (want it to mention %q, no secret)", msg, tc.want)
			}
			// The session stays usable.
			e.resolver.set(newLLMClient(t, e.llm.BaseURL(), 5*time.Second))
			e.llm.Enqueue(llmtest.Reply{Text: "recovered"})
			s = e.OpenStream("alice", path("/stream"), map[string]any{"message": "again", "session_id": sid})
			if got := types(s.All(t)); !strings.HasSuffix(got, "done") || strings.Contains(got, "error") {
				t.Fatalf("after failure: %s", got)
			}
		})
	}
}

func TestHeartbeat(t *testing.T) {
	e := newEnv(t, 20*time.Millisecond)
	e.llm.Enqueue(llmtest.Reply{Text: "slow", Delay: 300 * time.Millisecond})
	s := e.OpenStream("alice", path("/stream"), map[string]any{"message": "hi"})
	events := s.All(t)
	if !strings.HasPrefix(types(events), "heartbeat") || events[len(events)-1]["type"] != "done" {
		t.Fatalf("events: %s", types(events))
	}
}

func TestNonStreaming(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Text: "All nodes are up."}, llmtest.Reply{Text: "Status"})
	r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "status?", "stream": false})
	var out chat.Reply
	r.JSON(t, &out)
	if r.Status != 200 || out.Content != "All nodes are up." || out.SessionID == "" {
		t.Fatalf("non-streaming: %d %s", r.Status, r.Body)
	}
}

func FuzzStreamBody(f *testing.F) {
	for _, s := range []string{`{"message":"hi"}`, `{"message":"hi","session_id":"x"}`, `{"message":"","temperature":-1}`, `{"message":null}`, `[]`, `{"message":"a","stream":"yes"}`, `{"message":"a","copilot_mode":"lab_automation_assistant","temperature":1e400}`} {
		f.Add(s)
	}
	srv := llmtest.NewServer(f)
	srv.SetDefault(llmtest.Reply{Text: "ok"})
	reg := agent.NewRegistry(agentID)
	reg.Register(&agent.Agent{ID: agentID})
	e := apitest.New(f, apitest.Options{SingleUser: true}, func(st store.Store, a *auth.Authenticator) []httpapi.Route {
		rt := agent.NewRuntime(agent.Options{Store: st, Agents: reg, LLM: llm.NewStaticResolver(newLLMClient(f, srv.BaseURL(), 5*time.Second)), Logger: discard})
		return chat.New(chat.Options{Runtime: rt, AgentID: agentID}).Routes()
	})
	f.Fuzz(func(t *testing.T, body string) {
		r := e.DoT(t, http.MethodPost, path("/stream"), "", body)
		if r.Status >= 500 {
			t.Fatalf("body %q: %d %s", body, r.Status, r.Body)
		}
		if r.Status != http.StatusOK && r.Message() == "" {
			t.Fatalf("body %q: %d without a message: %s", body, r.Status, r.Body)
		}
	})
}

func TestNonStreamingFailureIsAnAPIError(t *testing.T) {
	e := newEnv(t, 0)
	e.llm.Enqueue(llmtest.Reply{Status: 500, Error: "boom"})
	r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "status?", "stream": false})
	if r.Status != http.StatusBadGateway || !strings.Contains(r.Message(), "The LLM provider failed (500)") {
		t.Fatalf("non-streaming failure: %d %s", r.Status, r.Body)
	}
}
