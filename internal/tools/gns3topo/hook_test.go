package gns3topo_test

import (
	"agentchat/internal/syncbuf"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
	"agentchat/internal/tools/gns3topo"

	"github.com/google/uuid"
	openai "github.com/sashabaranov/go-openai"
)

// userToken is the user's GNS3 bearer credential: it must reach GNS3 and
// nothing else (no prompt, no log).
const userToken = "eyJhbGciOiJIUzI1NiJ9.gns3-user-SECRET-7d41.sig"

// env is the runtime with the default agents, the copilot's hook calling
// GNS3 at a given URL, a SQLite store and the scripted LLM.
type env struct {
	t    *testing.T
	llm  *llmtest.Server
	rt   *agent.Runtime
	logs *syncbuf.Buffer
}

func newEnv(t *testing.T, gns3URL string, timeout time.Duration) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv := llmtest.NewServer(t)
	lc, err := llm.NewClient(llm.Config{APIKey: "sk-test", BaseURL: srv.BaseURL(), Model: "test-model", MaxRetries: -1},
		llm.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	gc, err := gns3.New(gns3URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	p := gns3topo.New(gns3topo.Options{Client: gc, Logger: log, Timeout: timeout})
	rt := agent.NewRuntime(agent.Options{
		Store:  st,
		Agents: agents.DefaultRegistry(agents.Deps{GNS3Topology: p.Prompt}),
		LLM:    llm.NewStaticResolver(lc),
		Logger: log,
	})
	return &env{t: t, llm: srv, rt: rt, logs: logs}
}

func userCtx(token string) context.Context {
	return auth.WithIdentity(context.Background(), auth.Identity{UserID: "user-1", Token: token, Via: auth.ViaJWT})
}

// turn runs one copilot turn and checks that it answered.
func (e *env) turn(ctx context.Context, key store.Key) {
	e.t.Helper()
	tr, err := e.rt.StartTurn(ctx, agent.TurnRequest{Key: key, AgentID: agents.GNS3Copilot, Message: "What is in my lab?"})
	if err != nil {
		e.t.Fatalf("start turn: %v", err)
	}
	var content strings.Builder
	var last agent.Event
	tr.Run(ctx, func(ev agent.Event) {
		switch ev.Type {
		case agent.EventContent:
			content.WriteString(ev.Content)
		case agent.EventError:
			e.t.Errorf("turn failed: %s", ev.Error)
		}
		last = ev
	})
	if content.String() != llmtest.DefaultText || last.Type != agent.EventDone {
		e.t.Fatalf("turn answered %q, last event %s", content.String(), last.Type)
	}
}

// prompts returns the system prompts of the copilot's LLM calls (not the
// title calls), and checks that no request carried the token.
func (e *env) prompts() []string {
	e.t.Helper()
	var out []string
	for _, r := range e.llm.Requests() {
		if strings.Contains(string(r.Body), userToken) {
			e.t.Errorf("LLM request %d carries the user's token", r.N)
		}
		if len(r.Messages) > 0 && r.Messages[0].Role == openai.ChatMessageRoleSystem &&
			strings.Contains(r.Messages[0].Content, "You are the GNS3 Copilot") {
			out = append(out, r.Messages[0].Content)
			if len(r.Tools) != 0 {
				e.t.Errorf("copilot offered tools: %v", r.Tools)
			}
		}
	}
	return out
}

// topologyOf parses the topology JSON ending a system prompt.
func topologyOf(t *testing.T, prompt string) gns3topo.Topology {
	t.Helper()
	_, after, ok := strings.Cut(prompt, gns3topo.Heading+"\n")
	if !ok {
		t.Fatalf("no topology section in %q", prompt)
	}
	lines := strings.Split(after, "\n")
	var topo gns3topo.Topology
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &topo); err != nil {
		t.Fatalf("topology JSON: %v in %q", err, after)
	}
	return topo
}

func TestTurnGetsTopology(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(userToken))
	pid := fake.AddProject("lab", gns3.StatusOpened)
	lab := fake.SeedTopology(pid)
	e := newEnv(t, fake.URL, 0)
	key := store.Key{ProjectID: pid, UserID: "user-1", ThreadID: uuid.NewString()}

	for turn := 1; turn <= 2; turn++ {
		e.turn(userCtx(userToken), key)
		// Once per turn: neither the steps nor the title call fetch again.
		if n, l := fake.Hits("GET /v3/projects/"+pid+"/nodes"), fake.Hits("GET /v3/projects/"+pid+"/links"); n != turn || l != turn {
			t.Fatalf("after turn %d: nodes fetched %d times, links %d", turn, n, l)
		}
		if fake.Requests() != 2*turn {
			t.Fatalf("after turn %d: %d GNS3 requests", turn, fake.Requests())
		}
		if got := fake.LastAuthorization(); got != "Bearer "+userToken {
			t.Fatalf("Authorization = %q", got)
		}
	}

	prompts := e.prompts()
	if len(prompts) != 2 {
		t.Fatalf("%d copilot LLM calls", len(prompts))
	}
	sys := prompts[1]
	for _, want := range []string{"Mode: teaching_assistant", "GNS3 tools are not available", gns3topo.Heading,
		`"name":"PC1"`, `"name":"Switch1"`, `"node_name":"R1"`, `"port_name":"Gi0/0"`, `"status":"started"`, `"console":5001`} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	for _, leak := range []string{userToken, "properties", "hda_disk_image", "ports_mapping", "/home/gns3", fake.URL, "unavailable"} {
		if strings.Contains(sys, leak) {
			t.Errorf("system prompt holds %q", leak)
		}
	}
	topo := topologyOf(t, sys)
	if topo.ProjectID != pid || len(topo.Nodes) != 4 || len(topo.Links) != 3 {
		t.Fatalf("topology = %+v", topo)
	}
	names := map[string]string{}
	for _, n := range topo.Nodes {
		names[n.NodeID] = n.Name
	}
	for name, id := range lab.Nodes {
		if names[id] != name {
			t.Errorf("node %s (%s) listed as %q", name, id, names[id])
		}
	}
	var ends []string
	for i, l := range topo.Links {
		if l.LinkID != lab.Links[i] || len(l.Nodes) != 2 {
			t.Fatalf("link %d = %+v", i, l)
		}
		ends = append(ends, l.Nodes[0].NodeName+" "+l.Nodes[0].PortName+" - "+l.Nodes[1].NodeName+" "+l.Nodes[1].PortName)
	}
	if got := strings.Join(ends, "; "); got != "PC1 Ethernet0 - Switch1 Ethernet0; PC2 Ethernet0 - Switch1 Ethernet1; R1 Gi0/0 - Switch1 Ethernet7" {
		t.Errorf("link ends: %s", got)
	}
	if logs := e.logs.String(); strings.Contains(logs, userToken) || strings.Contains(logs, "topology unavailable") {
		t.Errorf("logs: %s", logs)
	}
}

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// hangingURL is a controller that never answers (until the request ends).
func hangingURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTurnWithoutTopology(t *testing.T) {
	status := func(code int) gns3test.Authorizer { return func(string, string) int { return code } }
	tests := []struct {
		name    string
		auth    gns3test.Authorizer
		url     func(t *testing.T, fake *gns3test.Server) string
		timeout time.Duration
		project func(fake *gns3test.Server, pid string) string
		ctx     context.Context
		want    string
	}{
		{name: "unreachable", url: func(t *testing.T, _ *gns3test.Server) string { return closedURL(t) },
			want: "the GNS3 controller could not be reached"},
		{name: "401", auth: gns3test.AcceptTokens("someone-else"), want: "the GNS3 controller did not accept the user's credentials"},
		{name: "no identity", auth: gns3test.AcceptTokens(userToken), ctx: context.Background(),
			want: "the GNS3 controller did not accept the user's credentials"},
		{name: "403", auth: status(http.StatusForbidden), want: "the GNS3 controller does not allow this user to read the project"},
		{name: "404", project: func(*gns3test.Server, string) string { return uuid.NewString() },
			want: "the GNS3 controller does not know this project"},
		{name: "deleted", project: func(f *gns3test.Server, pid string) string { f.DeleteProject(pid); return pid },
			want: "the GNS3 controller does not know this project"},
		{name: "500", auth: status(http.StatusInternalServerError), want: "the GNS3 controller answered with an error (HTTP 500 Internal Server Error)"},
		{name: "invalid id", project: func(*gns3test.Server, string) string { return "not-a-uuid" },
			want: "the project id is not a valid GNS3 project id"},
		{name: "timeout", url: func(t *testing.T, _ *gns3test.Server) string { return hangingURL(t) }, timeout: 20 * time.Millisecond,
			want: "the GNS3 controller did not answer in time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := gns3test.NewServer(t, tt.auth)
			pid := fake.AddProject("lab", gns3.StatusOpened)
			fake.SeedTopology(pid)
			u := fake.URL
			if tt.url != nil {
				u = tt.url(t, fake)
			}
			if tt.project != nil {
				pid = tt.project(fake, pid)
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = userCtx(userToken)
			}
			e := newEnv(t, u, tt.timeout)
			e.turn(ctx, store.Key{ProjectID: pid, UserID: "user-1", ThreadID: uuid.NewString()})

			prompts := e.prompts()
			if len(prompts) != 1 {
				t.Fatalf("%d copilot LLM calls", len(prompts))
			}
			sys := prompts[0]
			if !strings.Contains(sys, gns3topo.Heading+"\nThe project topology is unavailable for this turn: "+tt.want) {
				t.Errorf("system prompt does not say %q:\n%s", tt.want, sys)
			}
			host := strings.TrimPrefix(u, "http://")
			for _, leak := range []string{userToken, host, "/v3/", "gns3:", "Could not validate", "Permission denied", `"nodes"`} {
				if strings.Contains(sys, leak) {
					t.Errorf("system prompt holds %q", leak)
				}
			}
			logs := e.logs.String()
			if !strings.Contains(logs, `"level":"WARN","msg":"gns3 topology unavailable"`) || !strings.Contains(logs, `"project_id":"`+pid+`"`) {
				t.Errorf("failure not logged: %s", logs)
			}
			if strings.Contains(logs, userToken) {
				t.Errorf("token logged: %s", logs)
			}
		})
	}
}

func TestNoProjectNoCall(t *testing.T) {
	fake := gns3test.NewServer(t, nil)
	e := newEnv(t, fake.URL, 0)
	res, err := e.rt.RunStateless(userCtx(userToken), agent.StatelessRequest{
		AgentID:  agents.GNS3Copilot,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
		UserID:   "user-1",
	}, func(agent.Event) {})
	if err != nil || res.Error != "" || res.Content != llmtest.DefaultText {
		t.Fatalf("stateless run: %v, %+v", err, res)
	}
	if fake.Requests() != 0 {
		t.Fatalf("GNS3 called %d times without a project", fake.Requests())
	}
	prompts := e.prompts()
	if len(prompts) != 1 || !strings.Contains(prompts[0], "unavailable for this turn: this conversation is not attached to a GNS3 project") {
		t.Fatalf("prompts = %q", prompts)
	}
}

func TestPromptWithoutClient(t *testing.T) {
	logs := &syncbuf.Buffer{}
	p := gns3topo.New(gns3topo.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if extra := p.Prompt(userCtx(userToken), uuid.NewString()); !strings.Contains(extra, "unavailable for this turn: GNS3 is not configured on this server") {
		t.Fatalf("prompt = %q", extra)
	}
	if _, err := p.Fetch(context.Background(), uuid.NewString()); err == nil {
		t.Fatal("Fetch without a client succeeded")
	}
}

// TestFetchIsConcurrent puts a barrier before the controller: each request
// waits for the other, so a sequential fetch could never finish.
func TestFetchIsConcurrent(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(userToken))
	pid := fake.AddProject("lab", gns3.StatusOpened)
	fake.SeedTopology(pid)
	target, err := url.Parse(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	arrived := 0
	both := make(chan struct{})
	barrier := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if arrived++; arrived == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(barrier.Close)
	gc, err := gns3.New(barrier.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := gns3topo.New(gns3topo.Options{Client: gc, Logger: slog.New(slog.DiscardHandler), Timeout: time.Minute})
	topo, err := p.Fetch(userCtx(userToken), pid)
	if err != nil || len(topo.Nodes) != 4 || len(topo.Links) != 3 {
		t.Fatalf("fetch: %v, %+v", err, topo)
	}
	if fake.Requests() != 2 {
		t.Fatalf("%d GNS3 requests", fake.Requests())
	}
}

// TestRefusedTurnGivesUpItsRead: the copilot reads the topology as a turn
// starts, beside its opening; a turn refused there (the session's lease
// held by another turn) gives the read up at once, and that is no
// controller failure to warn about. The turn that holds the lease still
// gets its topology.
func TestRefusedTurnGivesUpItsRead(t *testing.T) {
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(userToken))
	pid := fake.AddProject("lab", gns3.StatusOpened)
	fake.SeedTopology(pid)
	e := newEnv(t, fake.URL, 0)
	ctx := userCtx(userToken)
	key := store.Key{ProjectID: pid, UserID: "user-1", ThreadID: uuid.NewString()}
	e.turn(ctx, key) // the session exists

	fake.SetHang(true)
	holder, err := e.rt.StartTurn(ctx, agent.TurnRequest{Key: key, AgentID: agents.GNS3Copilot, Message: "first"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.rt.StartTurn(ctx, agent.TurnRequest{Key: key, AgentID: agents.GNS3Copilot, Message: "second"})
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second turn: %v", err)
	}
	fake.SetHang(false)
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	e.turn(ctx, key)
	prompts := e.prompts()
	if len(prompts) != 2 || len(topologyOf(t, prompts[1]).Nodes) != 4 {
		t.Fatalf("prompts %q", prompts)
	}
	if logs := e.logs.String(); strings.Contains(logs, "WARN") {
		t.Fatalf("a given-up read was logged as a warning: %s", logs)
	}
}
