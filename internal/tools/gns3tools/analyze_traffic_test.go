package gns3tools

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/pcapsum/pcaptest"
)

func findings(r map[string]any) string {
	s, _ := r["summary"].(map[string]any)
	var out []string
	for _, f := range s["findings"].([]any) {
		out = append(out, f.(string))
	}
	return strings.Join(out, "\n")
}

func (e *env) captureHits(lid, what string) int {
	return e.fake.Hits("POST /v3/projects/" + e.pid + "/links/" + lid + "/capture/" + what)
}

// TestAnalyzeStartsReadsStops: the tool starts a capture, reads its pcap
// through GNS3, sums it up and stops the capture.
func TestAnalyzeStartsReadsStops(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	lid := topo.Links[0]
	e.fake.SetCaptureSource(lid, func() io.Reader { return pcaptest.FaultCapture().Reader() })
	out, err := e.Rec.Run(userCtx(), e.Tool(ToolAnalyzeTraffic), `{"link":"PC1:e0","max_packets":17}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 16<<10 {
		t.Errorf("answer of %d bytes", len(out))
	}
	a := e.Decode(out, nil)
	r := a.item(t, 0, "success")
	if r["link_id"] != lid || !strings.HasPrefix(r["capture"].(string), "started for this call and stopped") {
		t.Errorf("result %v", r)
	}
	f := findings(r)
	for _, want := range []string{"OSPF hello-interval mismatch", "asked for 10.0.12.99 3 time(s) without a reply"} {
		if !strings.Contains(f, want) {
			t.Errorf("no %q in\n%s", want, f)
		}
	}
	if s := r["summary"].(map[string]any); s["stopped"] != "max_packets" || s["packets"] != float64(17) {
		t.Errorf("summary %v", s)
	}
	if e.captureHits(lid, "start") != 1 || e.captureHits(lid, "stop") != 1 || e.fake.Link(e.pid, lid)["capturing"] != false {
		t.Errorf("capture started %d, stopped %d times; capturing %v", e.captureHits(lid, "start"), e.captureHits(lid, "stop"), e.fake.Link(e.pid, lid)["capturing"])
	}
}

// TestAnalyzeUsersCapture: a capture the user runs is read, never
// stopped; the time limit ends the reading.
func TestAnalyzeUsersCapture(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	lid := topo.Links[2] // R1 gi0/0 - Switch1 e7
	e.fake.SetCapturing(e.pid, lid, true)
	e.fake.SetCaptureSource(lid, func() io.Reader { return pcaptest.FaultCapture().Reader() })
	a := e.Call(ToolAnalyzeTraffic, `{"link":"`+lid+`","seconds":1,"filter":"ospf"}`)
	r := a.item(t, 0, "success")
	s := r["summary"].(map[string]any)
	if s["stopped"] != "time_limit" || s["packets"] != float64(5) || s["scanned"] != float64(17) || s["filter"] != "ospf" ||
		!strings.HasPrefix(r["capture"].(string), "already running (the user's)") {
		t.Errorf("result %v", r)
	}
	if e.captureHits(lid, "start") != 0 || e.captureHits(lid, "stop") != 0 || e.fake.Link(e.pid, lid)["capturing"] != true {
		t.Errorf("the user's capture was touched")
	}
}

// TestAnalyzeAbortStopsCapture: an abort during the reading ends the
// tool and still stops the capture it started.
func TestAnalyzeAbortStopsCapture(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	lid := topo.Links[0]
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	e.fake.SetCaptureSource(lid, func() io.Reader { return pr })
	go func() { _, _ = pw.Write(pcaptest.FaultCapture().Bytes()[:24]) }() // the header, then nothing
	ctx, cancel := context.WithCancel(userCtx())
	done := make(chan struct{})
	var out string
	var err error
	go func() {
		defer close(done)
		out, err = e.Rec.Run(ctx, e.Tool(ToolAnalyzeTraffic), `{"link":"`+lid+`","seconds":60}`)
	}()
	bound := time.After(20 * time.Second) // a safety bound, not a timing assertion
	for e.fake.OpenStreams(lid) == 0 {
		select {
		case <-bound:
			t.Fatal("the tool never opened the stream")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-bound:
		t.Fatal("the tool did not return after the abort")
	}
	if err != nil {
		t.Fatal(err)
	}
	a := e.Decode(out, nil)
	if msg := errText(a.item(t, 0, "failed")); !strings.HasPrefix(msg, "cancelled") {
		t.Errorf("aborted: %q", msg)
	}
	if e.captureHits(lid, "stop") != 1 || e.fake.Link(e.pid, lid)["capturing"] != false {
		t.Errorf("capture not stopped after the abort")
	}
}

func TestAnalyzeRefusals(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	dead := e.fake.AddLink(e.pid, gns3test.LinkPayload(e.pid, topo.Nodes["R1"], 0, 1, "gi0/1", topo.Nodes["PC2"], 0, 1, "e1"))
	a := e.Call(ToolAnalyzeTraffic, `{"link":"`+dead+`"}`)
	if msg := errText(a.item(t, 0, "failed")); msg != "cannot start a capture on the link: 409: Cannot capture because there is no running device on this link" {
		t.Errorf("stopped devices: %q", msg)
	}
	a = e.Call(ToolAnalyzeTraffic, `{"link":"PC1:e0","filter":"ospf; reboot"}`)
	if msg := errText(a.item(t, 0, "failed")); !strings.Contains(msg, `unknown word "ospf;"`) {
		t.Errorf("bad filter: %q", msg)
	}
	if n := e.captureHits(topo.Links[0], "start"); n != 0 {
		t.Errorf("%d captures started for a bad filter", n)
	}
	e.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Link.Capture"))
	a = e.Call(ToolAnalyzeTraffic, `{"link":"PC1:e0"}`)
	if msg := errText(a.item(t, 0, "failed")); !strings.Contains(msg, "privilege Link.Capture is required") {
		t.Errorf("no capture privilege: %q", msg)
	}
	for _, args := range []string{`{"link":"PC1:e0","seconds":61}`, `{"link":"PC1:e0","max_packets":5001}`, `{"link":"PC1:e0","seconds":0}`} {
		if _, err := e.Rec.Run(userCtx(), e.Tool(ToolAnalyzeTraffic), args); err == nil {
			t.Errorf("%s accepted", args)
		}
	}
	if n := e.captureHits(topo.Links[0], "start"); n != 1 { // the refused one
		t.Errorf("%d capture starts", n)
	}
}
