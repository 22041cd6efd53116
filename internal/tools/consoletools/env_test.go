package consoletools

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/console/consoletest"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/toolkit"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// userToken is the user's GNS3 credential: it must reach GNS3 and appear
// in no output, error or log line.
const userToken = "eyJhbGciOiJIUzI1NiJ9.consoletools-user-SECRET-77aa.sig"

// env is a fake GNS3 controller with one opened project whose nodes point
// at fake consoles, and a toolset on it.
type env struct {
	*toolkittest.Caller[answer]
	t     *testing.T
	fake  *gns3test.Server
	pid   string
	ts    *Toolset
	locks *MemoryLocker
	nodes int
}

func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(userToken))
	e := &env{t: t, fake: fake, locks: &MemoryLocker{}}
	e.Caller = &toolkittest.Caller[answer]{
		T:        t,
		Rec:      toolkittest.NewRecorder(t, userToken, "SECRET"),
		Token:    userToken,
		Tools:    func() []agent.Tool { return e.ts.Project(e.pid) },
		Statuses: []string{toolkit.StatusSuccess, toolkit.StatusPartial, toolkit.StatusFailed},
		Check:    e.check,
	}
	e.pid = fake.AddProject("lab", "opened")
	c, err := gns3.New(fake.URL, nil, gns3.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Client:         c,
		ConsoleHost:    "127.0.0.1",
		Locks:          e.locks,
		Logger:         e.Rec.Logger(),
		CommandTimeout: 3 * time.Second,
	}
	for _, f := range opts {
		f(&o)
	}
	e.ts = New(o)
	e.ts.lockWait, e.ts.lockPoll = 300*time.Millisecond, 50*time.Millisecond
	return e
}

// addRouter adds a started Qemu router node named name whose console is a
// fake IOS, tagged with tags (nil: device_type:cisco_ios_telnet).
func (e *env) addRouter(name string, o consoletest.IOSOptions, tags ...string) *consoletest.IOS {
	e.t.Helper()
	o.Hostname = name
	r := consoletest.NewIOS(e.t, o)
	if tags == nil {
		tags = []string{"device_type:cisco_ios_telnet"}
	}
	e.addNode(gns3test.QemuRouterNode(e.pid, name, e.nodes*150, 0), r.Port(), tags)
	return r
}

func (e *env) addNode(n map[string]any, port int, tags []string) {
	e.nodes++
	n["console"] = port
	n["console_host"] = "127.0.0.1"
	n["status"] = "started"
	if len(tags) > 0 {
		var ts []any
		for _, t := range tags {
			ts = append(ts, t)
		}
		n["tags"] = ts
	}
	e.fake.AddNode(e.pid, n)
}

// addPC adds a started VPCS node whose console is a fake VPCS.
func (e *env) addPC(name string) *consoletest.VPCS {
	e.t.Helper()
	pc := consoletest.NewVPCS(e.t, name)
	e.nodes++
	e.fake.AddNode(e.pid, gns3test.VPCSNode(e.pid, name, "started", pc.Port(), e.nodes*150, 200))
	return pc
}

func userCtx() context.Context { return toolkittest.UserContext(userToken) }

// answer is a decoded tool answer.
type answer toolkit.Report[deviceResult]

// check checks that a successful device had nothing blocked and that no
// output holds terminal noise.
func (e *env) check(a answer) {
	e.t.Helper()
	for _, r := range a.Results {
		if r.Status == toolkit.StatusSuccess && len(r.BlockedCommands) > 0 {
			e.t.Errorf("successful result with problems: %+v", r)
		}
		for _, bad := range []string{"\x1b", "--More--", "\r", "\xff"} {
			if strings.Contains(r.Output, bad) {
				e.t.Errorf("output of %s holds %q:\n%s", r.DeviceName, bad, r.Output)
			}
		}
	}
}

// result returns result i, failing the test when it has another status.
func (a answer) result(t *testing.T, i int, status string) deviceResult {
	t.Helper()
	if i >= len(a.Results) {
		t.Fatalf("no result %d in %+v", i, a)
	}
	if r := a.Results[i]; r.Status != status {
		t.Fatalf("result %d: %+v, want status %s", i, r, status)
	}
	return a.Results[i]
}
