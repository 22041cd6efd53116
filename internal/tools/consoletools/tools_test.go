package consoletools

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/console"
	"agentchat/internal/console/consoletest"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/toolkit"
	"agentchat/internal/tools/toolkit/toolkittest"
)

func TestShowOnTwoRouters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	// R2 keeps paging on and colours its output: neither may show
	r2 := e.addRouter("R2", consoletest.IOSOptions{KeepPaging: true, PageLines: 3, ANSI: true})
	a := e.Call(ToolDeviceCommands, `{"device_configs":[
		{"device_name":"R1","commands":["show ip interface brief"]},
		{"device_name":"r2","commands":["show ip interface brief"]}]}`)
	if !a.Success || a.Total != 2 {
		t.Fatalf("answer %+v", a)
	}
	for i, name := range []string{"R1", "R2"} {
		out := a.result(t, i, toolkit.StatusSuccess).Output
		for _, want := range []string{name + "#show ip interface brief\nInterface", "GigabitEthernet0/3", "\n" + name + "#"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
	if a.Results[1].DeviceName != "r2" {
		t.Errorf("device_name %q, want the name asked", a.Results[1].DeviceName)
	}
	for _, r := range []*consoletest.IOS{r1, r2} {
		if !r.WaitClosed(2 * time.Second) {
			t.Error("console connection left open")
		}
	}
}

func TestBlockedCommandNeverSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	a := e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":
		["show clock", "reload", "  DEBUG   ip packet", "show version", "conf t"]}]}`)
	r := a.result(t, 0, toolkit.StatusPartial)
	if want := []string{"reload", "DEBUG   ip packet", "conf t"}; !slices.Equal(r.BlockedCommands, want) {
		t.Errorf("blocked %q, want %q", r.BlockedCommands, want)
	}
	if !strings.Contains(r.Error, `reload: blocked by the safety filter ("reload")`) || !strings.Contains(r.Error, "configuration mode") {
		t.Errorf("error %q", r.Error)
	}
	for _, l := range r1.Lines() {
		if low := strings.ToLower(l); strings.Contains(low, "reload") || strings.Contains(low, "debug") || strings.HasPrefix(low, "conf") {
			t.Errorf("the device received %q", l)
		}
	}
	if !r1.Received("show clock") || !r1.Received("show version") {
		t.Errorf("the allowed commands did not run: %q", r1.Lines())
	}
	if !strings.Contains(r.Output, "R1#show version\nCisco IOS") {
		t.Errorf("output:\n%s", r.Output)
	}

	// nothing allowed: no connection at all
	r2 := e.addRouter("R2", consoletest.IOSOptions{})
	a = e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R2","commands":["exit","write erase"]}]}`)
	if r := a.result(t, 0, toolkit.StatusFailed); !strings.Contains(r.Error, "nothing was sent") || len(r.BlockedCommands) != 2 {
		t.Errorf("result %+v", r)
	}
	if n := r2.Connections(); n != 0 {
		t.Errorf("%d connections to a device whose commands were all blocked", n)
	}
}

func TestConfigureInterface(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	cfg := []string{"interface GigabitEthernet0/1", "description uplink to R2", "ip address 10.1.1.1 255.255.255.0", "no shutdown"}
	a := e.Call(ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":
		["interface GigabitEthernet0/1","description uplink to R2","ip address 10.1.1.1 255.255.255.0","no shutdown"]}]}`)
	r := a.result(t, 0, toolkit.StatusSuccess)
	if got := r1.ConfigLines(); !slices.Equal(got, cfg) {
		t.Errorf("config lines %q, want %q", got, cfg)
	}
	if r1.Prompt() != "R1#" || r1.Mode() != "enable" {
		t.Errorf("device left at %q (%s)", r1.Prompt(), r1.Mode())
	}
	if ip, mask, up := r1.Interface("GigabitEthernet0/1"); ip != "10.1.1.1" || mask != "255.255.255.0" || !up {
		t.Errorf("interface %s %s up=%v", ip, mask, up)
	}
	for _, want := range []string{"R1#configure terminal\n", "R1(config)#interface GigabitEthernet0/1\nR1(config-if)#description",
		"R1(config-if)#end\n"} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Output)
		}
	}
	if !strings.HasSuffix(r.Output, "\nR1#") {
		t.Errorf("output does not end at R1#:\n%s", r.Output)
	}
	// the change is visible with a show command
	a = e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["sh ip int br"]}]}`)
	if out := a.result(t, 0, toolkit.StatusSuccess).Output; !strings.Contains(out, "GigabitEthernet0/1         10.1.1.1") {
		t.Errorf("show after config:\n%s", out)
	}
}

func TestConfigErrorStillEndsAtEnable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	a := e.Call(ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":
		["interface g0/0","ip address 10.0.0.1","ip address 10.0.0.1 255.255.255.0","exit","router ospf 1","network 10.0.0.0 0.0.0.255 area 0"]}]}`)
	r := a.result(t, 0, toolkit.StatusPartial)
	if !strings.Contains(r.Error, "ip address 10.0.0.1: % Invalid input detected at '^' marker.") {
		t.Errorf("error %q", r.Error)
	}
	if !slices.Equal(r.BlockedCommands, []string{"exit"}) {
		t.Errorf("blocked %q", r.BlockedCommands)
	}
	want := []string{"interface g0/0", "ip address 10.0.0.1 255.255.255.0", "router ospf 1", "network 10.0.0.0 0.0.0.255 area 0"}
	if got := r1.ConfigLines(); !slices.Equal(got, want) {
		t.Errorf("config lines %q, want %q", got, want)
	}
	if r1.Prompt() != "R1#" {
		t.Errorf("device left at %q", r1.Prompt())
	}
}

func TestBanner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	r2 := e.addRouter("R2", consoletest.IOSOptions{})
	a := e.Call(ToolDeviceConfigCommands, `{"device_configs":[
		{"device_name":"R1","config_commands":["banner motd #","Authorized access only","Lab R1","#","hostname R1"]},
		{"device_name":"R2","config_commands":["banner motd ^C\nWelcome to R2\n^C","interface Loopback0","ip address 2.2.2.2 255.255.255.255"]},
		{"device_name":"R1x","config_commands":["banner motd #","never closed"]}]}`)
	a.result(t, 0, toolkit.StatusSuccess)
	a.result(t, 1, toolkit.StatusSuccess)
	if got := r1.Banner(); got != "Authorized access only\nLab R1" {
		t.Errorf("R1 banner %q", got)
	}
	if got := r2.Banner(); !strings.Contains(got, "Welcome to R2") {
		t.Errorf("R2 banner %q", got)
	}
	if ip, _, _ := r2.Interface("Loopback0"); ip != "2.2.2.2" {
		t.Errorf("R2 loopback %q (config %q)", ip, r2.ConfigLines())
	}
	if r1.Prompt() != "R1#" || r2.Prompt() != "R2#" {
		t.Errorf("prompts %q %q", r1.Prompt(), r2.Prompt())
	}
	// an unclosed banner is never sent (R1x does not exist, so check on R1)
	a = e.Call(ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":["hostname R1","banner motd #","never closed"]}]}`)
	r := a.result(t, 0, toolkit.StatusPartial)
	if !strings.Contains(r.Error, "not closed by its delimiter") || r1.Received("never closed") {
		t.Errorf("result %+v", r)
	}
	if r1.Prompt() != "R1#" {
		t.Errorf("device left at %q", r1.Prompt())
	}
}

func TestDeviceTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A Qemu node whose image tells nothing needs a tag.
	r1 := consoletest.NewIOS(t, consoletest.IOSOptions{Hostname: "R1"})
	n1 := gns3test.QemuRouterNode(e.pid, "R1", 0, 0)
	n1["properties"].(map[string]any)["hda_disk_image"] = "debian-12.qcow2"
	e.addNode(n1, r1.Port(), []string{"lab", "owner:alice"})
	e.addRouter("R2", consoletest.IOSOptions{}, "Device_Type:juniper_junos")
	e.addRouter("R3", consoletest.IOSOptions{}, " device_type: CISCO_IOS_TELNET ")
	pc := e.addPC("PC1")
	a := e.Call(ToolDeviceCommands, `{"device_configs":[
		{"device_name":"R1","commands":["show clock"]},
		{"device_name":"R2","commands":["show clock"]},
		{"device_name":"R3","commands":["show clock"]},
		{"device_name":"PC1","commands":["show ip","ip 10.9.9.9/24"]}]}`)
	for i, r := range []deviceResult{a.result(t, 0, toolkit.StatusFailed), a.result(t, 1, toolkit.StatusFailed)} {
		if !strings.Contains(r.Error, "cisco_ios_telnet, vpcs") {
			t.Errorf("result %d error %q does not name the supported types", i, r.Error)
		}
	}
	if !strings.Contains(a.Results[0].Error, "R1 has no device type") || !strings.Contains(a.Results[1].Error, "juniper_junos") {
		t.Errorf("errors %q / %q", a.Results[0].Error, a.Results[1].Error)
	}
	a.result(t, 2, toolkit.StatusSuccess)
	r := a.result(t, 3, toolkit.StatusPartial)
	if !strings.Contains(r.Output, "PC1> show ip\n") || !slices.Equal(r.BlockedCommands, []string{"ip 10.9.9.9/24"}) {
		t.Errorf("VPCS via the show tool: %+v", r)
	}
	if ip, _ := pc.IP(); ip.IsValid() {
		t.Errorf("the read-only tool changed the PC: %v", ip)
	}
}

func TestVPCSTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pc1 := e.addPC("PC1")
	pc2 := e.addPC("PC2")
	e.addRouter("R1", consoletest.IOSOptions{})
	a := e.Call(ToolVPCSCommands, `{"device_configs":[
		{"device_name":"PC1","commands":["ip 10.0.0.1/24 10.0.0.254","show ip"]},
		{"device_name":"PC2","commands":["ip 10.0.0.2/24 10.0.0.254","pnig 10.0.0.1"]},
		{"device_name":"R1","commands":["show clock"]}]}`)
	out := a.result(t, 0, toolkit.StatusSuccess).Output
	for _, want := range []string{"PC1> ip 10.0.0.1/24 10.0.0.254\nChecking for duplicate address...\nPC1 : 10.0.0.1 255.255.255.0 gateway 10.0.0.254",
		"IP/MASK     : 10.0.0.1/24", "GATEWAY     : 10.0.0.254"} {
		if !strings.Contains(out, want) {
			t.Errorf("PC1 output lacks %q:\n%s", want, out)
		}
	}
	if ip, gw := pc1.IP(); ip.String() != "10.0.0.1/24" || gw != "10.0.0.254" {
		t.Errorf("PC1 %v %s", ip, gw)
	}
	if r := a.result(t, 1, toolkit.StatusPartial); !strings.Contains(r.Error, "pnig 10.0.0.1: Bad command") {
		t.Errorf("PC2 %+v", r)
	}
	if ip, _ := pc2.IP(); ip.String() != "10.0.0.2/24" {
		t.Errorf("PC2 %v", ip)
	}
	if r := a.result(t, 2, toolkit.StatusFailed); !strings.Contains(r.Error, "R1 is not a VPCS node") {
		t.Errorf("R1 %+v", r)
	}
	a = e.Call(ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"PC1","config_commands":["ip 1.1.1.1/24"]}]}`)
	if r := a.result(t, 0, toolkit.StatusFailed); !strings.Contains(r.Error, "no configuration mode; use execute_vpcs_commands") {
		t.Errorf("config on a PC: %+v", r)
	}
}

func TestBusyDevice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	nodeID := e.nodeID("R1")
	if err := e.locks.AcquireDeviceLock(context.Background(), e.pid, nodeID, "other-turn", time.Minute); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a := e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["show clock"]}]}`)
	if r := a.result(t, 0, toolkit.StatusFailed); !strings.Contains(r.Error, "R1 is busy") {
		t.Errorf("result %+v", r)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("waited %v for a busy device (lock wait 300ms)", d)
	}
	if r1.Connections() != 0 {
		t.Error("a busy device's console was opened")
	}
	// freed meanwhile: the call waits and then runs
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = e.locks.ReleaseDeviceLock(context.Background(), e.pid, nodeID, "other-turn")
	}()
	_ = e.locks.AcquireDeviceLock(context.Background(), e.pid, nodeID, "other-turn", time.Minute)
	a = e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["show clock"]}]}`)
	a.result(t, 0, toolkit.StatusSuccess)
	// released after the run
	if err := e.locks.AcquireDeviceLock(context.Background(), e.pid, nodeID, "next", time.Minute); err != nil {
		t.Errorf("lock not released: %v", err)
	}
}

func (e *env) nodeID(name string) string {
	e.t.Helper()
	for _, n := range e.fake.Nodes(e.pid) {
		if n["name"] == name {
			return n["node_id"].(string)
		}
	}
	e.t.Fatalf("no node %s", name)
	return ""
}

func TestFailuresPerDevice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.CommandTimeout = time.Second })
	e.addRouter("R1", consoletest.IOSOptions{})
	silent := e.addRouter("R2", consoletest.IOSOptions{Silent: true})
	e.addRouter("R3", consoletest.IOSOptions{})
	stopped := gns3test.QemuRouterNode(e.pid, "R4", 600, 0)
	stopped["tags"] = []any{"device_type:cisco_ios_telnet"}
	e.fake.AddNode(e.pid, stopped)
	start := time.Now()
	a := e.Call(ToolDeviceCommands, `{"device_configs":[
		{"device_name":"R1","commands":["show clock","show ip foo","show version"]},
		{"device_name":"R2","commands":["show clock"]},
		{"device_name":"R3","commands":["show clock","show drop","show version"]},
		{"device_name":"R4","commands":["show clock"]},
		{"device_name":"R9","commands":["show clock"]}]}`)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if r := a.result(t, 0, toolkit.StatusPartial); !strings.Contains(r.Error, "show ip foo: % Invalid input detected") ||
		!strings.Contains(r.Output, "R1#show version\nCisco") {
		t.Errorf("R1 %+v", r)
	}
	if r := a.result(t, 1, toolkit.StatusFailed); !strings.Contains(r.Error, "did not answer") || !strings.Contains(r.Error, "no prompt on the console") {
		t.Errorf("R2 %+v", r)
	}
	if !silent.WaitClosed(2 * time.Second) {
		t.Error("silent console left open")
	}
	if r := a.result(t, 2, toolkit.StatusPartial); !strings.Contains(r.Error, "show drop: the console connection was closed") ||
		!strings.Contains(r.Error, "show version: not run") || !strings.Contains(r.Output, "partial line") {
		t.Errorf("R3 %+v", r)
	}
	if r := a.result(t, 3, toolkit.StatusFailed); !strings.Contains(r.Error, "R4 is stopped; start it first") {
		t.Errorf("R4 %+v", r)
	}
	if r := a.result(t, 4, toolkit.StatusFailed); !strings.Contains(r.Error, "device 'R9' not found; nodes: R1, R2, R3, R4") {
		t.Errorf("R9 %+v", r)
	}
	if !strings.Contains(e.Rec.Logs(), "console tool had failures") {
		t.Error("failures not logged")
	}
}

func TestDuplicateAndConsoleType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addRouter("R1", consoletest.IOSOptions{})
	vnc := gns3test.QemuRouterNode(e.pid, "R2", 200, 0)
	vnc["console_type"] = "vnc"
	vnc["status"] = "started"
	vnc["tags"] = []any{"device_type:cisco_ios_telnet"}
	e.fake.AddNode(e.pid, vnc)
	a := e.Call(ToolDeviceCommands, `{"device_configs":[
		{"device_name":"R1","commands":["show clock"]},
		{"device_name":"`+e.nodeID("R1")+`","commands":["show version"]},
		{"device_name":"R2","commands":["show clock"]}]}`)
	// R1, named twice (by name and by id), is one device: one session, its
	// commands in order, one result.
	if a.Total != 2 {
		t.Fatalf("answer %+v, want the two items of R1 merged", a)
	}
	r := a.result(t, 0, toolkit.StatusSuccess)
	if i, j := strings.Index(r.Output, "show clock"), strings.Index(r.Output, "show version"); i < 0 || j < i {
		t.Errorf("merged R1 output %q, want show clock then show version", r.Output)
	}
	if r := a.result(t, 1, toolkit.StatusFailed); !strings.Contains(r.Error, "console is vnc, not telnet") {
		t.Errorf("vnc %+v", r)
	}

	// An item without a device name fails alone.
	a = e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"","commands":["show clock"]},{"device_name":"R1","commands":["show clock"]}]}`)
	if r := a.result(t, 0, toolkit.StatusFailed); r.Error == "" {
		t.Errorf("nameless item %+v", r)
	}
	a.result(t, 1, toolkit.StatusSuccess)
}

func TestConsoleHostFallback(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var dialed []string
	e := newEnv(t, func(o *Options) {
		o.ConsoleHost = "[127.0.0.1]"
		o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	})
	r := consoletest.NewIOS(t, consoletest.IOSOptions{})
	n := gns3test.QemuRouterNode(e.pid, "R1", 0, 0)
	n["console"] = r.Port()
	n["console_host"] = "0.0.0.0" // GNS3 reports a compute bound to every address
	n["status"] = "started"
	n["tags"] = []any{"device_type:cisco_ios_telnet"}
	e.fake.AddNode(e.pid, n)
	a := e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["show clock"]}]}`)
	a.result(t, 0, toolkit.StatusSuccess)
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 1 || dialed[0] != r.Addr() {
		t.Errorf("dialed %q, want %s", dialed, r.Addr())
	}
}

func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	open, peak := 0, 0
	e := newEnv(t, func(o *Options) {
		o.Concurrency = 2
		o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			open++
			peak = max(peak, open)
			mu.Unlock()
			return &countedConn{Conn: c, done: func() { mu.Lock(); open--; mu.Unlock() }}, nil
		}
	})
	var items []string
	for i := range 5 {
		name := "R" + string(rune('1'+i))
		e.addRouter(name, consoletest.IOSOptions{SlowPause: 50 * time.Millisecond})
		items = append(items, `{"device_name":"`+name+`","commands":["show slow"]}`)
	}
	a := e.Call(ToolDeviceCommands, `{"device_configs":[`+strings.Join(items, ",")+`]}`)
	if !a.Success || a.Total != 5 {
		t.Fatalf("answer %+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 {
		t.Errorf("%d consoles open at once, want 2", peak)
	}
	if open != 0 {
		t.Errorf("%d consoles left open", open)
	}
}

type countedConn struct {
	net.Conn
	once sync.Once
	done func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.done)
	return c.Conn.Close()
}

func TestAbortClosesConsoleAndReleasesLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.CommandTimeout = 30 * time.Second })
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	ctx, cancel := context.WithCancel(userCtx())
	done := make(chan answer, 1)
	go func() {
		done <- e.Decode(e.Rec.Run(ctx, e.Tool(ToolDeviceCommands), `{"device_configs":[{"device_name":"R1","commands":["show clock","show hang","show version"]}]}`))
	}()
	if !r1.WaitConnected(1, 3*time.Second) {
		t.Fatal("no connection")
	}
	deadline := time.Now().Add(3 * time.Second)
	for !r1.Received("show hang") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case a := <-done:
		r := a.result(t, 0, toolkit.StatusPartial)
		if !strings.Contains(r.Error, "show hang: cancelled") || !strings.Contains(r.Output, "R1#show clock") {
			t.Errorf("result %+v", r)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the tool did not stop on abort")
	}
	if !r1.WaitClosed(2 * time.Second) {
		t.Error("the console still sees the connection open after the abort")
	}
	if err := e.locks.AcquireDeviceLock(context.Background(), e.pid, e.nodeID("R1"), "next", time.Minute); err != nil {
		t.Errorf("lock not released after the abort: %v", err)
	}
}

func TestTimeLimitReturnsPartialResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.CommandTimeout = 30 * time.Second })
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	ctx, cancel := context.WithTimeout(userCtx(), 2*time.Second)
	defer cancel()
	start := time.Now()
	a := e.Decode(e.Rec.Run(ctx, e.Tool(ToolDeviceCommands), `{"device_configs":[{"device_name":"R1","commands":["show clock","show hang"]}]}`))
	if d := time.Since(start); d >= 2*time.Second {
		t.Errorf("answered after %v, past the deadline", d)
	}
	r := a.result(t, 0, toolkit.StatusPartial)
	if !strings.Contains(r.Error, "show hang: stopped: the tool's time limit was reached") {
		t.Errorf("result %+v", r)
	}
	if !r1.WaitClosed(2 * time.Second) {
		t.Error("connection left open after the time limit")
	}
}

// renewLocker counts acquisitions and can refuse renewals.
type renewLocker struct {
	MemoryLocker
	mu      sync.Mutex
	calls   int
	refuseN int // refuse the n-th acquisition and after (0: never)
}

func (l *renewLocker) AcquireDeviceLock(ctx context.Context, p, n, owner string, ttl time.Duration) error {
	l.mu.Lock()
	l.calls++
	refuse := l.refuseN > 0 && l.calls >= l.refuseN
	l.mu.Unlock()
	if refuse {
		return errors.Join(errors.New("store: lease held"), ErrDeviceBusy)
	}
	return l.MemoryLocker.AcquireDeviceLock(ctx, p, n, owner, ttl)
}

func TestLockRenewedAndLost(t *testing.T) {
	t.Parallel()
	l := &renewLocker{}
	e := newEnv(t, func(o *Options) { o.Locks = l })
	e.ts.lockTTL = 200 * time.Millisecond
	e.addRouter("R1", consoletest.IOSOptions{SlowPause: 150 * time.Millisecond})
	a := e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["show slow"]}]}`)
	a.result(t, 0, toolkit.StatusSuccess)
	l.mu.Lock()
	calls := l.calls
	l.refuseN = 2 // the first renewal finds the lease taken
	l.calls = 0
	l.mu.Unlock()
	if calls < 3 {
		t.Errorf("%d acquisitions over a 600ms run with a 200ms lease, want renewals", calls)
	}
	a = e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["show slow","show clock"]}]}`)
	r := a.Results[0]
	if r.Status == toolkit.StatusSuccess || !strings.Contains(r.Error, "lock was lost") {
		t.Errorf("result %+v", r)
	}
}

func TestNotConfigured(t *testing.T) {
	t.Parallel()
	ts := New(Options{})
	for _, tl := range append(ts.Project("p"), ts.Gateway()...) {
		if _, err := tl.Run(context.Background(), []byte(`{}`)); !errors.Is(err, ErrNotConfigured) || err.Error() != "GNS3 is not configured" {
			t.Errorf("%s: %v", tl.Name, err)
		}
	}
}

func TestGatewayTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addRouter("R1", consoletest.IOSOptions{})
	tl := toolkittest.FindTool(t, e.ts.Gateway(), ToolDeviceCommands)
	a := e.Decode(e.Rec.Run(userCtx(), tl, `{"project_id":"`+e.pid+`","device_configs":[{"device_name":"R1","commands":["show clock"]}]}`))
	a.result(t, 0, toolkit.StatusSuccess)
	if _, err := e.Rec.Run(userCtx(), tl, `{"device_configs":[{"device_name":"R1","commands":["show clock"]}]}`); err == nil ||
		!strings.Contains(err.Error(), "project_id") {
		t.Errorf("missing project_id: %v", err)
	}
	// an unknown project fails every device with GNS3's reason
	a = e.Decode(e.Rec.Run(userCtx(), tl, `{"project_id":"`+"00000000-0000-4000-8000-000000000000"+`","device_configs":[{"device_name":"R1","commands":["show clock"]}]}`))
	if r := a.result(t, 0, toolkit.StatusFailed); !strings.Contains(r.Error, "cannot read the project's nodes: 404") {
		t.Errorf("result %+v", r)
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	ios, _ := console.Lookup(console.TypeCiscoIOSTelnet)
	vpcs, _ := console.Lookup(console.TypeVPCS)
	f := NewFilter(DefaultBlocked())
	const exec, config = false, true
	cases := []struct {
		typ    *console.DeviceType
		config bool
		cmd    string
		prefix string
	}{
		{&ios, exec, "reload", "reload"},
		{&ios, exec, "  RELOAD   in 5", "reload"},
		{&ios, exec, "reload\tat 10:00", "reload"},
		{&ios, exec, "rel", "reload"},
		{&ios, exec, "relo", "reload"},
		{&ios, exec, "reloa", "reload"},
		{&ios, exec, "rel in 5", "reload"},
		{&ios, exec, "re", ""}, // ambiguous on IOS (release, reload, renew, resume, ...)
		{&ios, exec, "release dhcp g0/0", ""},
		{&ios, exec, "reloads", ""},
		{&ios, exec, "traceroute 10.0.0.1", "traceroute"},
		{&ios, exec, "traceroute6 ::1", "traceroute"},
		{&ios, exec, "trace 10.0.0.1", "traceroute"},
		{&ios, exec, "tr 10.0.0.1", "traceroute"},
		{&ios, exec, "tracepath 10.0.0.1", "tracepath"},
		{&ios, exec, "tracert 10.0.0.1", "tracert"},
		{&ios, exec, "debug ip ospf events", "debug"},
		{&ios, exec, "Debug All", "debug"},
		{&ios, exec, "deb all", "debug"},
		{&ios, exec, "de all", ""}, // ambiguous (debug, delete)
		{&ios, exec, "test crypto self-test", "test"},
		{&ios, exec, "tes crypto", "test"},
		{&ios, exec, "ping -f 10.0.0.1", "ping -f"},
		{&ios, exec, "ping   -F 10.0.0.1", "ping -f"},
		{&ios, exec, "pi -f 10.0.0.1", "ping -f"},
		{&ios, exec, "erase startup-config", "erase"},
		{&ios, exec, "era", "erase"},
		{&ios, exec, "er nvram:", "erase"},
		{&ios, exec, "write erase", "write erase"},
		{&ios, exec, "WRITE   ERASE", "write erase"},
		{&ios, exec, "wr er", "write erase"},
		{&ios, exec, "write er", "write erase"},
		{&ios, exec, "wr e", "write erase"},
		{&ios, exec, "format flash:", "format"},
		{&ios, exec, "fo flash:", "format"},
		{&ios, exec, "exit", "exit"},
		{&ios, exec, "ex", "exit"},
		{&ios, exec, "do reload", "reload"},
		{&ios, exec, "do do debug all", "debug"},
		{&ios, config, "do rel", "reload"},
		{&ios, config, "do wr er", "write erase"},
		{&ios, config, "exit", "exit"},
		{&ios, config, "ex", "exit"},
		{&ios, config, "exit-address-family", ""},
		{&ios, config, "alias exec x reload", "alias"},
		{&ios, config, "al exec x reload", "alias"},
		{&ios, exec, "tclsh", "tclsh"},
		{&ios, exec, "tcl", "tclsh"},
		{&ios, config, "do tclsh", "tclsh"},
		{&ios, config, "event manager applet X", "event manager"},
		{&ios, config, "ev man applet X", "event manager"},
		{&ios, exec, "event manager run X", "event manager"},
		{&ios, config, "kron policy-list P", "kron"},
		{&ios, exec, "quit", "quit"},
		{&vpcs, exec, "q", "quit"},
		{&vpcs, exec, "quit", "quit"},
		{&ios, config, "exiting", ""},
		{&ios, config, "do", ""},
		{&ios, config, "interface g0/0", ""},
		{&ios, config, "description reload-test link", ""},
		{&ios, exec, "show ip interface brief", ""},
		{&ios, exec, "show reload", ""},
		{&ios, exec, "show reload-history", ""},
		{&ios, exec, "ping 10.0.0.1", ""},
		{&ios, exec, "ping -c 3 10.0.0.1", ""},
		{&ios, exec, "write memory", ""},
		{&ios, exec, "write", ""},
		{&ios, exec, "wr", ""},
		{&ios, config, "do write memory", ""},
		{&ios, config, "do wr", ""},
		{&ios, exec, "no debug all", ""},
		{&ios, exec, "undebug all", ""},
		{&ios, exec, "testing", ""},
		{&ios, exec, "show debugging", ""},
		{&ios, exec, "terminal length 0", ""},
		{&ios, exec, "t 10.0.0.1", ""}, // ambiguous on IOS
		{&ios, exec, "", ""},
		{&vpcs, exec, "t 10.0.0.1", "traceroute"}, // VPCS reads any prefix of tracer
		{&vpcs, exec, "trace 10.0.0.1", "traceroute"},
		{&vpcs, exec, "tracer 10.0.0.1", "traceroute"},
		{&vpcs, exec, "@trace 10.0.0.1", "traceroute"},
		{&vpcs, exec, "ping 10.0.0.1", ""},
		{&vpcs, exec, "show ip", ""},
		{&vpcs, exec, "ip 10.0.0.1/24 10.0.0.254", ""},
		{&vpcs, exec, "save", ""},
	}
	for _, c := range cases {
		p, blocked := f.Match(c.typ, c.config, c.cmd)
		if p != c.prefix || blocked != (c.prefix != "") {
			t.Errorf("%s (config %v): Match(%q) = %q %v, want %q", c.typ.Name, c.config, c.cmd, p, blocked, c.prefix)
		}
	}
	custom := NewFilter([]string{"  Show  Run ", "", "copy", "username", "shutdown"})
	if got := custom.Prefixes(); !slices.Equal(got, []string{"show run", "copy", "username", "shutdown"}) {
		t.Errorf("prefixes %q", got)
	}
	customCases := []struct {
		config bool
		cmd    string
		want   bool
	}{
		{exec, "show running-config", false}, // a word is not matched inside a longer one
		{exec, "SHOW RUN all", true},
		{exec, "sh run", true},
		{exec, "sh r", true},
		{exec, "copy run start", true},
		{exec, "cop run start", true}, // from the IOS table
		{exec, "co run start", false}, // ambiguous on IOS
		{config, "username admin privilege 15 secret x", true},
		{config, "us admin privilege 15", true}, // from the configuration table
		{exec, "us admin", false},               // not in the exec table: DefaultMinAbbrev
		{config, "shu", true},                   // unknown word: DefaultMinAbbrev
		{config, "sh", false},
		{exec, "sh ip int br", false},
	}
	for _, c := range customCases {
		if _, got := custom.Match(&ios, c.config, c.cmd); got != c.want {
			t.Errorf("custom (config %v): Match(%q) = %v, want %v", c.config, c.cmd, got, c.want)
		}
	}
	if _, ok := NewFilter(nil).Match(&ios, false, "reload"); ok {
		t.Error("an empty filter blocked")
	}
	d := DefaultBlocked()
	d[0] = "changed"
	if DefaultBlocked()[0] != "traceroute" {
		t.Error("DefaultBlocked shares its slice")
	}
}

func TestConfiguredBlockList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.Blocked = []string{"show version"} })
	r1 := e.addRouter("R1", consoletest.IOSOptions{})
	a := e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["sh ver","traceroute 10.0.0.9"]}]}`)
	r := a.result(t, 0, toolkit.StatusFailed)
	if !slices.Equal(r.BlockedCommands, []string{"sh ver"}) {
		t.Errorf("blocked %q", r.BlockedCommands)
	}
	// traceroute is allowed by this list, and read-only: it was sent (the fake does not know it)
	if !r1.Received("traceroute 10.0.0.9") {
		t.Errorf("lines %q", r1.Lines())
	}
	// the configuration tool runs what the list allows
	e.Call(ToolDeviceConfigCommands, `{"device_configs":[{"device_name":"R1","config_commands":["do reload"]}]}`)
	if !r1.Received("do reload") {
		t.Errorf("lines %q", r1.Lines())
	}
	if !strings.Contains(toolkittest.FindTool(t, e.ts.Project("p"), ToolDeviceCommands).Description, "never sent and are reported in blocked_commands: show version.") {
		t.Error("the description does not list the configured prefixes")
	}
}

// TestDeviceTypeFromNode: without a device_type tag, the driver comes from
// what GNS3 reports of the node: VPCS, Dynamips and IOU nodes, and Qemu
// nodes running an IOSv image; a tag still wins.
func TestDeviceTypeFromNode(t *testing.T) {
	t.Parallel()
	qemu := func(image string) map[string]any { return map[string]any{"hda_disk_image": image} }
	cases := []struct {
		nodeType   string
		properties map[string]any
		tags       []string
		want       string
	}{
		{"vpcs", nil, nil, console.TypeVPCS},
		{"dynamips", map[string]any{"platform": "c7200"}, nil, console.TypeCiscoIOSTelnet},
		{"iou", map[string]any{"path": "i86bi-linux-l3-adventerprisek9-15.5.2T.bin"}, nil, console.TypeCiscoIOSTelnet},
		{"qemu", qemu("vios-adventerprisek9-m.spa.159-3.m6.qcow2"), nil, console.TypeCiscoIOSTelnet},
		{"qemu", qemu("vios_l2-adventerprisek9-m.ssa.high_iron_20200929.qcow2"), nil, console.TypeCiscoIOSTelnet},
		{"qemu", qemu("debian-12.qcow2"), nil, ""},
		{"qemu", qemu("myvios.qcow2"), nil, ""},
		{"docker", nil, nil, ""},
		{"dynamips", nil, []string{"device_type:vpcs"}, console.TypeVPCS},
	}
	for _, tc := range cases {
		n := &gns3.Node{Name: "N", NodeType: tc.nodeType, Properties: tc.properties, Tags: tc.tags}
		got, err := deviceType(n)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "has no device type") {
				t.Errorf("%s %v: type %q, err %v; want no device type", tc.nodeType, tc.properties, got.Name, err)
			}
			continue
		}
		if err != nil || got.Name != tc.want {
			t.Errorf("%s %v %v: type %q, err %v; want %s", tc.nodeType, tc.properties, tc.tags, got.Name, err, tc.want)
		}
	}
}
