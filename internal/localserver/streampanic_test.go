package localserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/agent"
	"agentchat/internal/config"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/llmconfig"
	"agentchat/internal/syncbuf"
	"agentchat/internal/wire"
	"agentchat/internal/wire/agentwire"
	"agentchat/internal/wire/dynamowire"
)

// This file enforces one rule on every route of the server: a streaming
// handler recovers its own panics and ends its stream with an error event
// then done (project SSE: `{"type":"error"}` then `{"type":"done"}`; /v1:
// `{"error":{...}}` then `[DONE]`), or answers a 500 JSON error in the
// surface's shape when nothing was written yet; and the server keeps
// serving (the next turn of the same session starts). The routes are the
// server's own (serverRoutes), and a route counts as streaming when it
// answers text/event-stream, so a new streaming route is tested as soon as
// it is mounted.

// probeHeader names the injection of a request (see injections).
const probeHeader = "X-Test-Injection"

// injection is the panic one request is made to hit.
type injection struct {
	name string
	// kind: "prepare" (the agent's Prepare hook), "tool" (the tool's run),
	// "refresh" (the Preparation's Refresh, after a tool with side effects
	// ran), "llm" (the LLM client, in its call number call after after
	// deltas), "title" (the non-streamed title call), "write" (the
	// handler's write of its writeAt-th SSE data event).
	kind    string
	call    int
	after   int
	writeAt int
	// calls counts the streamed LLM calls of the request.
	calls atomic.Int32
	fired atomic.Bool
}

// fire records that the injection was reached and panics.
func (in *injection) fire(where string) {
	in.fired.Store(true)
	panic("injected panic in " + where)
}

type injectionKey struct{}

// injectionOf is the injection of the request ctx belongs to, or nil.
func injectionOf(ctx context.Context) *injection {
	in, _ := ctx.Value(injectionKey{}).(*injection)
	return in
}

// agentInjections are the panics of the agent side, each at its first or
// a later event of a turn.
func agentInjections() []*injection {
	return []*injection{
		{name: "prepare hook", kind: "prepare"},
		{name: "llm before the first delta", kind: "llm", call: 1},
		{name: "llm after two deltas", kind: "llm", call: 1, after: 2},
		{name: "llm call after the tool", kind: "llm", call: 2},
		{name: "refresh hook after the tool", kind: "refresh"},
		{name: "tool", kind: "tool"},
		{name: "title call", kind: "title"},
	}
}

// mustFire are the injections every streaming route must reach (the title
// call is the project chat's only).
var mustFire = []string{"prepare", "llm", "refresh", "tool", "write"}

// panicWriter panics instead of writing the writeAt-th SSE data event
// (with its id line, when it has one).
type panicWriter struct {
	http.ResponseWriter
	in *injection
	n  int // data events written so far (writes are serialized by sse.Stream)
}

func (w *panicWriter) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("data: ")) || bytes.HasPrefix(b, []byte("id: ")) {
		w.n++
		if w.n == w.in.writeAt {
			w.in.fire(fmt.Sprintf("the write of SSE event %d", w.n))
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *panicWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// injecting wraps a route's handler: the injection registered under the
// request's probeHeader goes into its context, and a write injection
// wraps its writer.
func injecting(h http.HandlerFunc, probes *sync.Map) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, _ := probes.Load(r.Header.Get(probeHeader))
		in, _ := v.(*injection)
		if in == nil {
			h(w, r)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), injectionKey{}, in))
		if in.kind == "write" {
			w = &panicWriter{ResponseWriter: w, in: in}
		}
		h(w, r)
	}
}

// panickyClient is an LLM client that panics where the request's
// injection says.
type panickyClient struct{ llm.Client }

func (c panickyClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Result, error) {
	in := injectionOf(ctx)
	if in == nil || in.kind != "llm" || int(in.calls.Add(1)) != in.call {
		return c.Client.Stream(ctx, req, onDelta)
	}
	if in.after == 0 {
		in.fire("the LLM call")
	}
	seen := 0
	_, _ = c.Client.Stream(ctx, req, func(d llm.Delta) error {
		if seen >= in.after {
			return nil // the rest never comes: the panic is after `after` deltas
		}
		seen++
		return onDelta(d)
	})
	in.fire("the LLM stream")
	return nil, nil
}

func (c panickyClient) Complete(ctx context.Context, req llm.Request) (*llm.Result, error) {
	if in := injectionOf(ctx); in != nil && in.kind == "title" {
		in.fire("the title call")
	}
	return c.Client.Complete(ctx, req)
}

// panickyResolver resolves every user to the panicky client.
type panickyResolver struct{ c llm.Client }

func (r panickyResolver) Resolve(context.Context, string) (llm.Resolved, error) {
	return llm.Resolved{Client: r.c}, nil
}

// panickyAgent is the agent every route runs (it is the registry's
// fallback): one tool with side effects, so that a step that ran it
// refreshes the prompt, and hooks that panic where the request's
// injection says.
func panickyAgent() *agent.Agent {
	skills := []agent.Skill{{Name: "lab", Prompt: "Probe the lab.", Tools: []agent.Tool{{
		Name: "probe", Description: "Probes the lab.", SideEffects: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			if in := injectionOf(ctx); in != nil && in.kind == "tool" {
				in.fire("the tool")
			}
			return "probed", nil
		},
	}}}}
	return &agent.Agent{
		ID: "panicker", SystemPrompt: "You are a test agent.", Skills: skills,
		Prepare: func(ctx context.Context, _ agent.TurnInfo) (agent.Preparation, error) {
			in := injectionOf(ctx)
			if in != nil && in.kind == "prepare" {
				in.fire("the prepare hook")
			}
			return agent.Preparation{Skills: skills, Refresh: func(ctx context.Context) (string, error) {
				if in := injectionOf(ctx); in != nil && in.kind == "refresh" {
					in.fire("the refresh hook")
				}
				return "The lab was probed.", nil
			}}, nil
		},
	}
}

// panicServer is the server's routes, each wrapped by injecting, over
// SQLite, the panicky agent and a scripted LLM that answers every turn
// with a text and a probe call, then a text.
type panicServer struct {
	url    string
	routes []httpapi.Route
	probes *sync.Map
	logs   *syncbuf.Buffer
}

func newPanicServer(t *testing.T) *panicServer {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Load(env(map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "HEARTBEAT_SECONDS": "3600", "LOG_LEVEL": "debug",
	}), config.LocalDefaults())
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	base, err := wire.NewBase(ctx, cfg, wire.NewLogger(logs, cfg.LogLevel), StoreOpener(dynamowire.Open))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = base.Close() })
	if err := base.UseLocalKey(); err != nil {
		t.Fatal(err)
	}

	scripted := llmtest.NewServer(t)
	scripted.SetHandler(func(req llmtest.Request) llmtest.Reply {
		switch {
		case !req.Stream:
			return llmtest.Reply{Text: "Lab check"} // the title
		case len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == "tool":
			return llmtest.Reply{Text: "All good."}
		}
		return llmtest.Reply{Text: "Checking the lab.", ToolCalls: []llmtest.ToolCall{{Name: "probe", Arguments: `{}`}}}
	})
	inner, err := llm.NewClient(llm.Config{APIKey: "sk-test", BaseURL: scripted.BaseURL(), Model: "test-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry("panicker")
	reg.Register(panickyAgent())
	res := panickyResolver{c: panickyClient{Client: inner}}
	rt := agent.NewRuntime(agent.Options{Store: base.Store, Agents: reg, LLM: res, Logger: base.Logger, TurnTimeout: time.Minute})

	users := userpath.New(base.GNS3)
	routes := serverRoutes(base, &agentwire.Agent{Registry: reg, Runtime: rt, LLM: res}, users, llmconfig.NewGroupSource(base.GNS3, users, 0))
	ps := &panicServer{routes: routes, probes: &sync.Map{}, logs: logs}
	wrapped := slices.Clone(routes)
	for i := range wrapped {
		wrapped[i].Handler = injecting(wrapped[i].Handler, ps.probes)
	}
	srv := httptest.NewServer(base.Router(wrapped...))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var b strings.Builder
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
				b.WriteString(line + "\n")
			}
		}
		t.Logf("server warnings and errors:\n%s", b.String())
	})
	ps.url = srv.URL
	return ps
}

// answer is one response, read to its end.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) sse() bool {
	return strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream")
}

// do sends a request with the injection in (nil: none).
func (ps *panicServer) do(t *testing.T, method, path string, body []byte, in *injection) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ps.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if in != nil {
		id := uuid.NewString()
		ps.probes.Store(id, in)
		defer ps.probes.Delete(id)
		req.Header.Set(probeHeader, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v (a stream cut without its end?)", method, path, err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// dataEvents returns the data payloads of an SSE body, failing on a line
// that is neither data, an event id, a comment nor blank.
func dataEvents(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "", strings.HasPrefix(line, ":"), strings.HasPrefix(line, "id: "):
		case strings.HasPrefix(line, "data: "):
			out = append(out, strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("not an SSE line: %q in %s", line, body)
		}
	}
	return out
}

// checkStreamEnd checks the end of a stream of style: exactly one closing
// event, last, right after an error event when wantErr and with no error
// event at all otherwise. It returns the error text.
func checkStreamEnd(t *testing.T, style httpapi.ErrorStyle, a answer, wantErr bool) string {
	t.Helper()
	data := dataEvents(t, a.body)
	if a.status != http.StatusOK || len(data) == 0 {
		t.Fatalf("status %d, %d events: %s", a.status, len(data), a.body)
	}
	var errs []string
	for i, d := range data {
		last := i == len(data)-1
		if style == httpapi.StyleOpenAI {
			if (d == "[DONE]") != last {
				t.Fatalf("[DONE] is not exactly the last event:\n%s", a.body)
			}
			var ev struct {
				Error *struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if !last && json.Unmarshal([]byte(d), &ev) == nil && ev.Error != nil {
				if ev.Error.Message == "" || ev.Error.Type == "" || i != len(data)-2 {
					t.Fatalf("error event %s is not a whole error right before [DONE]:\n%s", d, a.body)
				}
				errs = append(errs, ev.Error.Message)
			}
			continue
		}
		var ev struct {
			Type      string `json:"type"`
			Error     string `json:"error"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("event %q: %v", d, err)
		}
		if (ev.Type == "done") != last {
			t.Fatalf("done is not exactly the last event:\n%s", a.body)
		}
		if sid := a.header.Get("X-Session-Id"); ev.SessionID != sid {
			t.Fatalf("event %s: session_id, want %q", d, sid)
		}
		if ev.Type == "error" {
			if ev.Error == "" || i != len(data)-2 {
				t.Fatalf("error event %s is not a whole error right before done:\n%s", d, a.body)
			}
			errs = append(errs, ev.Error)
		}
	}
	switch {
	case wantErr && len(errs) != 1:
		t.Fatalf("want an error event then the end, got:\n%s", a.body)
	case !wantErr && len(errs) != 0:
		t.Fatalf("want no error event, got:\n%s", a.body)
	case wantErr:
		return errs[0]
	}
	return ""
}

// checkErrorShape checks that a JSON error answer has the shape of its
// surface.
func checkErrorShape(t *testing.T, style httpapi.ErrorStyle, a answer) {
	t.Helper()
	var body struct {
		Message *string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &body); err != nil || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d %q: not a JSON error (%v): %s", a.status, a.header.Get("Content-Type"), err, a.body)
	}
	if style == httpapi.StyleOpenAI {
		if body.Error == nil || body.Error.Message == "" || body.Error.Type == "" {
			t.Fatalf("status %d: not an OpenAI error: %s", a.status, a.body)
		}
		return
	}
	if body.Message == nil || *body.Message == "" {
		t.Fatalf("status %d: not a {\"message\"} error: %s", a.status, a.body)
	}
}

var pathParam = regexp.MustCompile(`\{[A-Za-z_]+(\.\.\.)?\}`)

// concrete fills the parameters of a route path with fresh UUIDs, so that
// no request touches another's project or session.
func concrete(path string) string {
	path = strings.ReplaceAll(path, "{$}", "")
	return pathParam.ReplaceAllStringFunc(path, func(string) string { return uuid.NewString() })
}

// probeBodies are the bodies sent to a route: one that any chat route
// accepts, streamed and not (nil: no body).
func probeBodies(method string) map[string][]byte {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return map[string][]byte{"no body": nil}
	}
	bodies := map[string][]byte{}
	for name, stream := range map[string]bool{"streamed": true, "not streamed": false} {
		b, _ := json.Marshal(map[string]any{
			"message": "Check the lab.", "messages": []any{map[string]any{"role": "user", "content": "Check the lab."}},
			"stream": stream,
		})
		bodies[name] = b
	}
	return bodies
}

// TestEveryStreamingRouteEndsItsStreamOnPanic: every route of the server
// is asked with the bodies of probeBodies; each one that answers a stream
// is then made to panic at every event of that stream (the handler's own
// writes) and at every panic point of the agent side (its hooks, its tool,
// the LLM client before its first delta, mid-stream and after a tool), and
// must end its stream with an error event then done, without leaking the
// panic, and serve the session's next turn. Non-streaming answers under the
// same panics are whole JSON, errors in the surface's shape.
func TestEveryStreamingRouteEndsItsStreamOnPanic(t *testing.T) {
	ps := newPanicServer(t)
	var streaming []string
	for _, rt := range ps.routes {
		for _, p := range rt.Paths() {
			for bodyName, body := range probeBodies(rt.Method) {
				name := rt.Method + " " + p + " " + bodyName
				base := ps.do(t, rt.Method, concrete(p), body, nil)
				if !base.sse() {
					t.Run(name, func(t *testing.T) { checkBuffered(t, ps, rt, p, body) })
					continue
				}
				streaming = append(streaming, rt.Method+" "+p)
				t.Run(name, func(t *testing.T) { checkStreaming(t, ps, rt, p, body, base) })
			}
		}
	}
	// A floor, so that the probe bodies keep reaching the chat routes.
	for _, want := range []string{
		"POST /v3/projects/{project_id}/chat/stream", "POST /v3/copilot/projects/{project_id}/chat/stream",
		"POST /v1/chat", "POST /v1/chat/completions",
	} {
		if !slices.Contains(streaming, want) {
			t.Errorf("%s did not stream for the probe bodies (streaming: %v)", want, streaming)
		}
	}
}

// checkStreaming runs the injections on a route whose answer to body
// (base, without injection) is a stream.
func checkStreaming(t *testing.T, ps *panicServer, rt httpapi.Route, path string, body []byte, base answer) {
	checkStreamEnd(t, rt.Style, base, false)
	injections := agentInjections()
	for n := range dataEvents(t, base.body) {
		injections = append(injections, &injection{name: fmt.Sprintf("write of event %d", n+1), kind: "write", writeAt: n + 1})
	}
	for _, in := range injections {
		t.Run(in.name, func(t *testing.T) {
			target := concrete(path)
			a := ps.do(t, rt.Method, target, body, in)
			fired := in.fired.Load()
			if !fired {
				if slices.Contains(mustFire, in.kind) {
					t.Fatalf("the injection was not reached: a streaming route must run the agent " +
						"(or give this test a way to make it panic)")
				}
				return
			}
			if in.kind != "tool" && bytes.Contains(a.body, []byte("injected panic")) {
				t.Fatalf("the panic reached the client: %s", a.body)
			}
			switch {
			case !a.sse():
				// Nothing was written before the panic: a 500 in the
				// surface's shape (only possible where the stream starts
				// with its first event).
				if a.status != http.StatusInternalServerError || rt.Style != httpapi.StyleOpenAI {
					t.Fatalf("status %d %s, want a stream or, for /v1 before any event, a 500", a.status, a.body)
				}
				checkErrorShape(t, rt.Style, a)
			case in.kind == "tool":
				// A panicking tool is a failed tool call, shown to the
				// model (its output says it crashed), never a crash: the
				// turn goes on.
				checkStreamEnd(t, rt.Style, a, false)
				if !bytes.Contains(a.body, []byte(" good.")) {
					t.Fatalf("the turn did not go on after the tool's panic: %s", a.body)
				}
			default:
				checkStreamEnd(t, rt.Style, a, true)
			}
			// The server keeps serving, and the session is free for its
			// next turn (the lease of the cut turn was released).
			if sid := a.header.Get("X-Session-Id"); sid != "" {
				next := ps.do(t, rt.Method, target, []byte(`{"message":"Again.","session_id":"`+sid+`"}`), nil)
				if !next.sse() {
					t.Fatalf("next turn of session %s: %d %s", sid, next.status, next.body)
				}
				checkStreamEnd(t, rt.Style, next, false)
			}
			if ok := ps.do(t, http.MethodGet, "/v1/", nil, nil); ok.status != http.StatusOK {
				t.Fatalf("after the panic: GET /v1/ = %d %s", ok.status, ok.body)
			}
		})
	}
}

// checkBuffered runs the agent injections on a route that does not stream
// body: whatever it answers is whole JSON (an error in the surface's shape).
func checkBuffered(t *testing.T, ps *panicServer, rt httpapi.Route, path string, body []byte) {
	for _, in := range agentInjections() {
		a := ps.do(t, rt.Method, concrete(path), body, in)
		if !in.fired.Load() {
			continue
		}
		if a.sse() {
			t.Fatalf("%s: streamed only under a panic", in.name)
		}
		if in.kind != "tool" && bytes.Contains(a.body, []byte("injected panic")) {
			t.Fatalf("%s: the panic reached the client: %s", in.name, a.body)
		}
		if a.status >= 400 {
			checkErrorShape(t, rt.Style, a)
		} else if !json.Valid(a.body) {
			t.Fatalf("%s: status %d, not JSON: %s", in.name, a.status, a.body)
		}
	}
}
