package gns3tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/syncbuf"
)

// userToken is the user's GNS3 bearer credential: it must reach GNS3 and
// appear in no output, error or log line.
const userToken = "eyJhbGciOiJIUzI1NiJ9.gns3tools-user-SECRET-93c1.sig"

// env is a fake controller with one project, a client and a toolset, and
// every answer and log line of its tools (scanned for the token when the
// test ends).
type env struct {
	t      *testing.T
	fake   *gns3test.Server
	pid    string
	client *gns3.Client
	ts     *Toolset
	logs   *syncbuf.Buffer

	mu   sync.Mutex
	seen []string
}

// newEnv starts the fake (serving userToken only) with an opened project;
// opts change the toolset options before New.
func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(userToken))
	e := &env{t: t, fake: fake, logs: &syncbuf.Buffer{}}
	e.pid = fake.AddProject("lab", "opened")
	e.rebuild(5*time.Second, opts...)
	t.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, s := range append(e.seen, e.logs.String()) {
			if strings.Contains(s, userToken) || strings.Contains(s, "SECRET") {
				t.Errorf("the user's token leaked: %s", s)
			}
		}
	})
	return e
}

// rebuild gives the env a new client, whose requests time out after
// callTimeout, and a new toolset with opts.
func (e *env) rebuild(callTimeout time.Duration, opts ...func(*Options)) {
	e.t.Helper()
	c, err := gns3.New(e.fake.URL, nil, gns3.WithCallTimeout(callTimeout))
	if err != nil {
		e.t.Fatal(err)
	}
	o := Options{
		Client:       c,
		Logger:       slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PollInterval: 10 * time.Millisecond,
	}
	for _, f := range opts {
		f(&o)
	}
	e.client, e.ts = c, New(o)
}

func userCtx() context.Context {
	return auth.WithIdentity(context.Background(), auth.Identity{UserID: "user-1", Token: userToken, Via: auth.ViaJWT})
}

// answer is a decoded tool answer.
type answer struct {
	Success    bool             `json:"success"`
	Total      int              `json:"total"`
	Successful int              `json:"successful"`
	Failed     int              `json:"failed"`
	Results    []map[string]any `json:"results"`
}

// tool returns the project tool name.
func (e *env) tool(name string) agent.Tool {
	e.t.Helper()
	return findTool(e.t, e.ts.Project(e.pid), name)
}

func findTool(t *testing.T, ts []agent.Tool, name string) agent.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return agent.Tool{}
}

// run runs a tool with the user's identity and returns its raw answer and
// error, recorded for the token scan.
func (e *env) run(ctx context.Context, tl agent.Tool, args string) (string, error) {
	out, err := tl.Run(ctx, json.RawMessage(args))
	e.mu.Lock()
	e.seen = append(e.seen, out)
	if err != nil {
		e.seen = append(e.seen, err.Error())
	}
	e.mu.Unlock()
	return out, err
}

// call runs the project tool name and decodes its answer, checking the
// answer's counts.
func (e *env) call(name, args string) answer {
	e.t.Helper()
	return e.decode(e.run(userCtx(), e.tool(name), args))
}

func (e *env) decode(out string, err error) answer {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("tool error: %v", err)
	}
	var a answer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		e.t.Fatalf("answer is not JSON: %v: %s", err, out)
	}
	ok := 0
	for _, r := range a.Results {
		switch r["status"] {
		case "success":
			ok++
			if _, has := r["error"]; has {
				e.t.Errorf("successful item with an error: %v", r)
			}
		case "failed":
			if s, _ := r["error"].(string); s == "" {
				e.t.Errorf("failed item without an error: %v", r)
			}
		default:
			e.t.Errorf("item status %v: %v", r["status"], r)
		}
	}
	if a.Total != len(a.Results) || a.Successful != ok || a.Failed != a.Total-ok || a.Success != (a.Failed == 0) {
		e.t.Errorf("inconsistent counts: %s", out)
	}
	return a
}

// item returns result i, failing the test when it has another status.
func (a answer) item(t *testing.T, i int, status string) map[string]any {
	t.Helper()
	if i >= len(a.Results) {
		t.Fatalf("no result %d in %+v", i, a)
	}
	r := a.Results[i]
	if r["status"] != status {
		t.Fatalf("result %d: %v, want status %s", i, r, status)
	}
	return r
}

// errText is the error of a result.
func errText(r map[string]any) string {
	s, _ := r["error"].(string)
	return s
}

// fastWaits makes every node type wait d at most.
func fastWaits(d time.Duration) func(*Options) {
	return func(o *Options) { o.WaitTimeout = func(string) time.Duration { return d } }
}
