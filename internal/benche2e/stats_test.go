package benche2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
)

func TestQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	v := ms(5, 1, 4, 2, 3, 10, 9, 8, 7, 6) // 1..10, unsorted
	for _, c := range []struct {
		q    float64
		want int
	}{{0, 1}, {0.1, 1}, {0.5, 5}, {0.51, 6}, {0.9, 9}, {0.99, 10}, {1, 10}} {
		if got := Quantile(v, c.q); got != time.Duration(c.want)*time.Millisecond {
			t.Errorf("Quantile(1..10, %v) = %v, want %dms", c.q, got, c.want)
		}
	}
	if v[0] != 5*time.Millisecond {
		t.Error("Quantile sorted its argument")
	}
	if Quantile(nil, 0.5) != 0 {
		t.Error("Quantile(nil) != 0")
	}
	if got := Quantile(ms(7), 0.99); got != 7*time.Millisecond {
		t.Errorf("Quantile of one value = %v", got)
	}
	if d := Diffs(ms(5, 7, 9), ms(1, 2)); len(d) != 2 || d[0] != 4*time.Millisecond || d[1] != 5*time.Millisecond {
		t.Errorf("Diffs = %v", d)
	}
}

func TestRatioAndCompare(t *testing.T) {
	if r := Ratio(3, 2); r != 1.5 {
		t.Errorf("Ratio(3, 2) = %v", r)
	}
	for _, b := range []float64{0, -1, math.NaN()} {
		if r := Ratio(1, b); !math.IsNaN(r) {
			t.Errorf("Ratio(1, %v) = %v, want NaN", b, r)
		}
	}
	ms := time.Millisecond
	agent1 := &Figures{Target: TargetAgentchat, N: 3, Added: []time.Duration{ms, 2 * ms, 9 * ms}}
	proxy1 := &Figures{Target: TargetProxy, N: 3, Added: []time.Duration{ms, ms, ms}}
	agentN := &Figures{Target: TargetAgentchat, N: 100, Wall: time.Second, CPU: 300 * ms, HaveCPU: true, PeakRSS: 30 << 20}
	proxyN := &Figures{Target: TargetProxy, N: 200, Wall: time.Second, CPU: 200 * ms, HaveCPU: true, PeakRSS: 15 << 20}
	r := Compare(agent1, proxy1, agentN, proxyN)
	if r.AddedTTFT != 2 {
		t.Errorf("added TTFT ratio = %v, want 2 (medians 2ms / 1ms)", r.AddedTTFT)
	}
	if r.CPU != 3 { // 3 ms / 1 ms per request
		t.Errorf("CPU ratio = %v, want 3", r.CPU)
	}
	if r.ReqPerSec != 0.5 {
		t.Errorf("req/s ratio = %v, want 0.5", r.ReqPerSec)
	}
	if r.PeakRSS != 2 {
		t.Errorf("peak RSS ratio = %v, want 2", r.PeakRSS)
	}
	// Missing figures give NaN, not a panic or a misleading number.
	r = Compare(nil, nil, &Figures{}, &Figures{})
	if !math.IsNaN(r.AddedTTFT) || !math.IsNaN(r.CPU) || !math.IsNaN(r.ReqPerSec) || !math.IsNaN(r.PeakRSS) {
		t.Errorf("Compare without figures = %+v, want NaNs", r)
	}
}

func TestGoals(t *testing.T) {
	ms := time.Millisecond
	phase := func(c int, agent, proxy *Figures) *Phase {
		agent.Target, proxy.Target = TargetAgentchat, TargetProxy
		return &Phase{Concurrency: c, Figures: []*Figures{{Target: TargetDirect}, proxy, agent}}
	}
	p1 := phase(1, &Figures{N: 1, Added: []time.Duration{ms}}, &Figures{N: 1, Added: []time.Duration{ms}})
	pn := phase(50, &Figures{N: 10, Wall: time.Second, CPU: 12 * ms, HaveCPU: true, PeakRSS: 40 << 20},
		&Figures{N: 10, Wall: time.Second, CPU: 10 * ms, HaveCPU: true, PeakRSS: 10 << 20})
	sc := &ScenarioResult{Name: ScenarioV1Stream, Phases: []*Phase{p1, pn}}
	sc.Ratios = Compare(p1.Target(TargetAgentchat), p1.Target(TargetProxy), pn.Target(TargetAgentchat), pn.Target(TargetProxy))
	rep := &Report{Scenarios: []*ScenarioResult{sc}}
	met := map[string]bool{}
	for _, g := range rep.Goals() {
		met[g.Name] = g.Met
	}
	want := map[string]bool{
		"/v1 stream added TTFT p50":               true,  // 1×
		"/v1 stream CPU per request at c=50":      true,  // 1.2×
		"/v1 stream req/s at c=50":                true,  // 1×
		"agentchat peak RSS at c=50 (/v1 stream)": false, // 40 MiB
	}
	for name, w := range want {
		if got, ok := met[name]; !ok || got != w {
			t.Errorf("goal %q: met %v (present %v), want %v", name, got, ok, w)
		}
	}
}

func TestProcParsing(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := []byte("1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 75 0 0 20 0 8 0 100 1000000 500 18446744073709551615\n")
	if got, err := parseStatCPU(stat); err != nil || got != 3250*time.Millisecond {
		t.Errorf("parseStatCPU = %v, %v; want 3.25s (325 ticks)", got, err)
	}
	if _, err := parseStatCPU([]byte("1234 (x) S 1")); err == nil {
		t.Error("parseStatCPU accepted a short line")
	}
	status := []byte("Name:\tagentchat\nVmPeak:\t  100 kB\nVmHWM:\t   35840 kB\nVmRSS:\t   20000 kB\n")
	if got, err := parseStatusKB(status, "VmHWM:"); err != nil || got != 35<<20 {
		t.Errorf("VmHWM = %d, %v; want 35 MiB", got, err)
	}
	if _, err := parseStatusKB(status, "VmSwap:"); err == nil {
		t.Error("a missing line gave no error")
	}
	busy, total, err := parseMachineCPU([]byte("cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 1 2 3\n"))
	if err != nil || busy != 170*clockTick || total != 990*clockTick {
		t.Errorf("parseMachineCPU = %v, %v, %v; want 1.7s busy of 9.9s", busy, total, err)
	}
	// This process can read its own figures (Linux).
	if _, err := ProcCPU(os.Getpid()); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if rss, err := PeakRSS(os.Getpid()); err != nil || rss <= 0 {
		t.Errorf("PeakRSS(self) = %d, %v", rss, err)
	}
}

func TestMintJWT(t *testing.T) {
	secret := []byte(benchSecret)
	v, err := auth.NewJWTVerifier(secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := MintJWT(secret, "bench-user", time.Hour, time.Now())
	if sub, err := v.Verify(tok); err != nil || sub != "bench-user" {
		t.Fatalf("agentchat's verifier: %q, %v", sub, err)
	}
	if _, err := v.Verify(MintJWT(secret, "u", time.Hour, time.Now().Add(-3*time.Hour))); err == nil {
		t.Error("an expired token passed")
	}
}

func TestReadStream(t *testing.T) {
	chunks := "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		": keep-alive\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\" there\"}}]}\n\n" +
		"data: [DONE]\n\n"
	calls := 0
	n, err := readStream(bufio.NewReader(strings.NewReader(chunks)), KindChunks, func() { calls++ })
	if err != nil || n != 2 || calls != 2 {
		t.Errorf("chunks: n=%d calls=%d err=%v; want 2 contents", n, calls, err)
	}
	if _, err := readStream(bufio.NewReader(strings.NewReader(chunks[:len(chunks)-16])), KindChunks, func() {}); err == nil {
		t.Error("a stream without [DONE] passed")
	}
	events := ": stream open\n\n" +
		"data: {\"type\":\"content\",\"content\":\"Hi\",\"session_id\":\"s\"}\n\n" +
		"data: {\"type\":\"tool_start\",\"tool_name\":\"content\",\"session_id\":\"s\"}\n\n" +
		"data: {\"type\":\"done\",\"session_id\":\"s\"}\n\n"
	if n, err := readStream(bufio.NewReader(strings.NewReader(events)), KindEvents, func() {}); err != nil || n != 1 {
		t.Errorf("events: n=%d err=%v; want 1 content", n, err)
	}
	bad := "data: {\"type\":\"error\",\"error\":\"boom\"}\n\ndata: {\"type\":\"done\"}\n\n"
	if _, err := readStream(bufio.NewReader(strings.NewReader(bad)), KindEvents, func() {}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("an error event gave %v", err)
	}
}

func TestParseIOCalls(t *testing.T) {
	b := []byte("rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 32\nread_bytes: 0\n")
	if n, err := parseIOCalls(b); err != nil || n != 42 {
		t.Errorf("parseIOCalls = %d, %v; want 42", n, err)
	}
	if _, err := parseIOCalls([]byte("rchar: 1\n")); err == nil {
		t.Error("no syscr/syscw gave no error")
	}
}

func TestEnvSettings(t *testing.T) {
	var e envSettings
	for _, tc := range []struct {
		v  string
		ok bool
	}{{"TURN_LOG=off", true}, {"A=", true}, {"noequals", false}, {"=x", false}, {"A B=1", false}} {
		if err := e.Set(tc.v); (err == nil) != tc.ok {
			t.Errorf("Set(%q): %v, want ok %v", tc.v, err, tc.ok)
		}
	}
	if e.String() != "TURN_LOG=off A=" {
		t.Errorf("settings %q", e.String())
	}
}

// A store the run does not know is refused before anything starts.
func TestRunRefusesUnknownStore(t *testing.T) {
	var stderr bytes.Buffer
	err := runMain(t.Context(), []string{"-server", "/nonexistent/agentchat", "-store", "mongodb"}, io.Discard, &stderr)
	if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "-store must be sqlite or dynalite") {
		t.Errorf("runMain with -store mongodb: %v, stderr %q", err, stderr.String())
	}
}
