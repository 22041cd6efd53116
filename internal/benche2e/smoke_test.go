package benche2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentchat/internal/localserver"
)

// roleEnv makes the test binary one of the benchmark's processes: "llm",
// "proxy" (their commands, with the binary's arguments) or "server"
// (agentchat's local server, as functions/local runs it).
const roleEnv = "BENCHE2E_TEST_ROLE"

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		var code int
		if role == "server" {
			if err := localserver.Run(ctx, os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
				os.Stderr.WriteString("agentchat: " + err.Error() + "\n")
				code = 1
			}
		} else {
			code = Main(ctx, append([]string{role}, os.Args[1:]...), os.Stdout, os.Stderr)
		}
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestSmoke runs every scenario with a few requests against the real
// processes: the scripted LLM, the proxy and agentchat's local server
// (this test binary in those roles), and checks the report.
func TestSmoke(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	role := func(r string, args ...string) *exec.Cmd {
		cmd := exec.Command(exe, args...)
		cmd.Env = []string{roleEnv + "=" + r}
		return cmd
	}
	dir := t.TempDir()
	proxyProfile := filepath.Join(dir, "proxy.pprof")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sys, err := Launch(ctx, Commands{
		LLM:    func(a ...string) *exec.Cmd { return role("llm", a...) },
		Proxy:  func(a ...string) *exec.Cmd { return role("proxy", a...) },
		Server: func() *exec.Cmd { return role("server") },
	}, LaunchOptions{Dir: dir, Chunks: 5, ProxyProfile: proxyProfile})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Stop()
	rep, err := Run(ctx, sys.Env, Options{Requests: 6, Warmup: 2, Concurrency: 3, Batch: 4, Chunks: 5, TurnsPerSession: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != len(Scenarios) {
		t.Fatalf("%d scenarios, want %d", len(rep.Scenarios), len(Scenarios))
	}
	for _, sc := range rep.Scenarios {
		if len(sc.Phases) != 2 {
			t.Fatalf("%s: %d phases, want 2", sc.Name, len(sc.Phases))
		}
		for _, p := range sc.Phases {
			for _, f := range p.Figures {
				if f.N != 6 || len(f.TTFT) != 6 || Quantile(f.TTFT, 0.5) <= 0 || Quantile(f.Total, 0.5) < Quantile(f.TTFT, 0.5) {
					t.Errorf("%s c=%d %s: n=%d ttft p50 %v total p50 %v", sc.Name, p.Concurrency, f.Target, f.N,
						Quantile(f.TTFT, 0.5), Quantile(f.Total, 0.5))
				}
				if f.Target == TargetDirect {
					continue
				}
				if f.Dials < 0 || f.UpstreamRequests < int64(f.N) {
					t.Errorf("%s c=%d %s: dials %d, upstream requests %d", sc.Name, p.Concurrency, f.Target, f.Dials, f.UpstreamRequests)
				}
				if !f.HaveCPU || f.PeakRSS <= 0 {
					t.Errorf("%s c=%d %s: no CPU time (%v) or peak RSS (%d)", sc.Name, p.Concurrency, f.Target, f.HaveCPU, f.PeakRSS)
				}
				if p.Concurrency == 1 && len(f.Added) != 6 {
					t.Errorf("%s c=1 %s: %d added TTFTs", sc.Name, f.Target, len(f.Added))
				}
			}
		}
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	for _, want := range []string{"agentchat's store: sqlite", "== v1-stream", "== project-continuing", "agentchat / proxy:", "goals", "| v1-nonstream |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	sys.Stop()
	if exited, err := sys.Server.Exited(); !exited || err != nil {
		t.Errorf("agentchat did not stop cleanly: exited %v, %v", exited, err)
	}
	// The proxy wrote its CPU profile on the way out (gzip-compressed
	// protocol buffers, as runtime/pprof writes them).
	if b, err := os.ReadFile(proxyProfile); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("no CPU profile of the proxy in %s (%d bytes, %v)", proxyProfile, len(b), err)
	}
}
