package gns3tools

import (
	"context"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/toolkit"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// userToken is the user's GNS3 bearer credential: it must reach GNS3 and
// appear in no output, error or log line.
const userToken = "eyJhbGciOiJIUzI1NiJ9.gns3tools-user-SECRET-93c1.sig"

// env is a fake controller with one project, a client and a toolset, and
// the caller of its project tools, which records every answer and log
// line of the tools (scanned for the token when the test ends).
type env struct {
	*toolkittest.Caller[answer]
	t      *testing.T
	fake   *gns3test.Server
	pid    string
	client *gns3.Client
	ts     *Toolset
}

// newEnv starts the fake (serving userToken only) with an opened project;
// opts change the toolset options before New.
func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(userToken))
	e := &env{t: t, fake: fake}
	e.Caller = &toolkittest.Caller[answer]{
		T:     t,
		Rec:   toolkittest.NewRecorder(t, userToken, "SECRET"),
		Token: userToken,
		Tools: func() []agent.Tool { return e.ts.Project(e.pid) },
		// The items of the GNS3 tools are a success or failed.
		Statuses: []string{toolkit.StatusSuccess, toolkit.StatusFailed},
	}
	e.pid = fake.AddProject("lab", "opened")
	e.rebuild(5*time.Second, opts...)
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
		Logger:       e.Rec.Logger(),
		PollInterval: 10 * time.Millisecond,
	}
	for _, f := range opts {
		f(&o)
	}
	e.client, e.ts = c, New(o)
}

func userCtx() context.Context { return toolkittest.UserContext(userToken) }

// answer is a decoded tool answer.
type answer toolkit.Report[map[string]any]

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
