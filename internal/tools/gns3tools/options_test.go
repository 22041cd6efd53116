package gns3tools

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/toolkit/toolkittest"
)

func TestWaitTimeouts(t *testing.T) {
	want := map[string]time.Duration{
		"vpcs": 30 * time.Second, "ethernet_switch": 30 * time.Second, "ethernet_hub": 30 * time.Second,
		"cloud": 30 * time.Second, "nat": 30 * time.Second, "frame_relay_switch": 30 * time.Second,
		"atm_switch": 30 * time.Second, "docker": 60 * time.Second, "iou": 90 * time.Second,
		"dynamips": 120 * time.Second, "qemu": 180 * time.Second, "virtualbox": 180 * time.Second,
		"vmware": 180 * time.Second, "traceng": 120 * time.Second, "": 120 * time.Second,
	}
	for typ, d := range want {
		if got := DefaultWaitTimeout(typ); got != d {
			t.Errorf("DefaultWaitTimeout(%q) = %v, want %v", typ, got, d)
		}
	}
	tool := func(o Options) time.Duration {
		return toolkittest.FindTool(t, New(o).Project("p"), ToolStartNode).Timeout
	}
	if got := tool(Options{}); got != 4*time.Minute {
		t.Errorf("default start timeout %v, want 4m", got)
	}
	long := func(typ string) time.Duration {
		if typ == "qemu" {
			return 10 * time.Minute
		}
		return time.Second
	}
	if got := tool(Options{WaitTimeout: long}); got != 11*time.Minute {
		t.Errorf("start timeout with a 10m qemu wait: %v, want 11m", got)
	}
}

func TestConcurrencyBound(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Concurrency = 2 })
	var nodes []string
	for i := range 8 {
		name := "PC" + string(rune('A'+i))
		e.fake.AddNode(e.pid, gns3test.VPCSNode(e.pid, name, "stopped", 5010+i, i*100, 0))
		nodes = append(nodes, `"`+name+`"`)
	}
	var (
		mu             sync.Mutex
		inFlight, peak int
	)
	e.fake.SetRequestAuthorizer(func(r *http.Request, _, _ string) int {
		if r.Method != http.MethodDelete {
			return http.StatusOK
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return http.StatusOK
	})
	a := e.Call(ToolDeleteNode, `{"nodes":[`+strings.Join(nodes, ",")+`]}`)
	if !a.Success || a.Total != 8 {
		t.Fatalf("answer %+v", a)
	}
	if peak > 2 || peak == 0 {
		t.Errorf("%d deletes ran at once, want at most 2", peak)
	}
}
