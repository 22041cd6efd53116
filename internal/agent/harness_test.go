package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"

	"github.com/google/uuid"
)

// testAPIKey must never appear in an event, a stored message or a log.
const testAPIKey = "sk-test-SECRET-0123456789abcdefghij"

// harness is a runtime over a real SQLite file and the scripted LLM server.
type harness struct {
	t   testing.TB
	st  *sqlite.Store
	llm *llmtest.Server
	rt  *Runtime
	res *swapResolver
}

// swapResolver resolves every user to its current client.
type swapResolver struct {
	mu     sync.Mutex
	client llm.Client
	// settings of the resolved configuration
	temperature  *float32
	maxTokens    int
	mode         string
	contextLimit int
	strategy     string
	approval     string
}

func (s *swapResolver) Resolve(ctx context.Context, _ string) (llm.Resolved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		return llm.Resolved{}, llm.ErrNotConfigured
	}
	return llm.Resolved{Client: s.client, Temperature: s.temperature, MaxTokens: s.maxTokens, CopilotMode: s.mode,
		ContextLimit: s.contextLimit, ContextStrategy: s.strategy, Approval: s.approval}, nil
}

func (s *swapResolver) set(c llm.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client = c
}

var discard = slog.New(slog.DiscardHandler)

// newClient builds an LLM client without retries.
func newClient(t testing.TB, baseURL string, callTimeout time.Duration) llm.Client {
	t.Helper()
	c, err := llm.NewClient(llm.Config{
		APIKey: testAPIKey, BaseURL: baseURL, Model: "test-model",
		CallTimeout: callTimeout, MaxRetries: -1,
	}, llm.WithLogger(discard))
	if err != nil {
		t.Fatalf("new llm client: %v", err)
	}
	return c
}

// newHarness registers the agents "naked" (fallback, no prompt, no tools)
// and "tester" (a system prompt, a skill prompt and tools).
func newHarness(t testing.TB, tools []Tool, mods ...func(*Options)) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv := llmtest.NewServer(t)
	res := &swapResolver{client: newClient(t, srv.BaseURL(), 0)}
	reg := NewRegistry("naked")
	reg.Register(&Agent{ID: "naked"})
	reg.Register(&Agent{
		ID: "tester", SystemPrompt: "You are a test agent.",
		Skills: []Skill{{Name: "test", Prompt: "Use the test tools.", Tools: tools}},
	})
	o := Options{Store: st, Agents: reg, LLM: res, Logger: discard, AbortPoll: 5 * time.Millisecond}
	for _, m := range mods {
		m(&o)
	}
	return &harness{t: t, st: st, llm: srv, rt: NewRuntime(o), res: res}
}

func newKey() store.Key {
	return store.Key{ProjectID: "project-1", UserID: "user-1", ThreadID: uuid.NewString()}
}

// events collects the events of a run.
type events []Event

func (ev *events) add(e Event) { *ev = append(*ev, e) }

// turn starts and runs a turn of the tester agent.
func (h *harness) turn(k store.Key, msg string) events {
	h.t.Helper()
	return h.turnCtx(context.Background(), k, msg, nil)
}

func (h *harness) turnCtx(ctx context.Context, k store.Key, msg string, onEvent func(Event)) events {
	h.t.Helper()
	tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "tester", Message: msg})
	if err != nil {
		h.t.Fatalf("start turn: %v", err)
	}
	var ev events
	tr.Run(ctx, func(e Event) {
		ev.add(e)
		if onEvent != nil {
			onEvent(e)
		}
	})
	return ev
}

func (h *harness) messages(k store.Key) []store.Message {
	h.t.Helper()
	msgs, err := h.st.ListMessages(context.Background(), k, 0)
	if err != nil {
		h.t.Fatalf("list messages: %v", err)
	}
	return msgs
}

func (h *harness) session(k store.Key) *store.Session {
	h.t.Helper()
	s, err := h.st.GetSession(context.Background(), k)
	if err != nil {
		h.t.Fatalf("get session: %v", err)
	}
	return s
}

// requests returns the recorded LLM requests.
func (h *harness) requests() []llmtest.Request { return h.llm.Requests() }

// checkEnd checks that the run ended with done, with exactly wantErr
// errors just before it, and returns the error text.
func checkEnd(t *testing.T, ev events, wantErr bool) string {
	t.Helper()
	if len(ev) == 0 || ev[len(ev)-1].Type != EventDone {
		t.Fatalf("last event is not done: %s", ev)
	}
	var errs []string
	for i, e := range ev {
		if e.Type == EventDone && i != len(ev)-1 {
			t.Fatalf("done before the end: %s", ev)
		}
		if e.Type == EventError {
			errs = append(errs, e.Error)
			if i != len(ev)-2 {
				t.Fatalf("error is not right before done: %s", ev)
			}
		}
	}
	switch {
	case wantErr && len(errs) != 1:
		t.Fatalf("want one error event, got %q in %s", errs, ev)
	case !wantErr && len(errs) != 0:
		t.Fatalf("want no error event, got %q", errs)
	}
	if wantErr {
		if e := errs[0]; strings.Contains(e, testAPIKey) || strings.Contains(e, "sk-") || strings.Contains(e, "<") {
			t.Fatalf("error event leaks a secret or markup: %q", e)
		}
		return errs[0]
	}
	return ""
}

// content concatenates the content events.
func (ev events) content() string {
	var b strings.Builder
	for _, e := range ev {
		if e.Type == EventContent {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

func (ev events) ofType(t EventType) []Event {
	var out []Event
	for _, e := range ev {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func (ev events) String() string {
	var b strings.Builder
	for _, e := range ev {
		b.WriteString(string(e.Type))
		switch {
		case e.Content != "":
			b.WriteString("(" + e.Content + ")")
		case e.ToolCall != nil:
			j, _ := json.Marshal(e.ToolCall)
			b.Write(j)
		case e.ToolName != "":
			b.WriteString("(" + e.ToolName + ":" + e.ToolOutput + ")")
		case e.Error != "":
			b.WriteString("(" + e.Error + ")")
		}
		b.WriteString(" ")
	}
	return b.String()
}

// addTool adds integers a and b.
func addTool(sideEffects bool) Tool {
	return Tool{
		Name: "add", Description: "Adds two integers.", SideEffects: sideEffects,
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`),
		Run: func(_ context.Context, args json.RawMessage) (string, error) {
			var in struct{ A, B int }
			if err := json.Unmarshal(args, &in); err != nil {
				return "", err
			}
			j, _ := json.Marshal(in.A + in.B)
			return string(j), nil
		},
	}
}

// closedURL is the base URL of a port where nothing listens.
func closedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/v1"
}

// waitFor waits for a signal with a generous bound (not a timing assertion:
// it only turns a hang into a failure).
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// ctxKey marks the context a test runs a turn with; logs must carry it.
type ctxKey struct{}

// logRecord is one log record seen by a logRecorder.
type logRecord struct {
	level slog.Level
	msg   string
	// text is the record's attributes as "key=value" pairs.
	text string
	// mark is the ctxKey value of the context the record was logged with.
	mark any
}

// logRecorder is a slog handler that keeps every record with the ctxKey
// value of its context (a context-aware handler sees the same).
type logRecorder struct {
	mu   *sync.Mutex
	recs *[]logRecord
}

func newLogRecorder() logRecorder {
	return logRecorder{mu: &sync.Mutex{}, recs: &[]logRecord{}}
}

func (l logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l logRecorder) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(a.Key + "=" + a.Value.String() + " ")
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.recs = append(*l.recs, logRecord{level: r.Level, msg: r.Message, text: b.String(), mark: ctx.Value(ctxKey{})})
	return nil
}

func (l logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logRecorder) WithGroup(string) slog.Handler      { return l }

func (l logRecorder) records() []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logRecord(nil), *l.recs...)
}

// withLogs makes the harness log into rec.
func withLogs(rec logRecorder) func(*Options) {
	return func(o *Options) { o.Logger = slog.New(rec) }
}
