package consoletest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// IOSOptions shape a fake IOS router.
type IOSOptions struct {
	// Hostname (default "R1").
	Hostname string
	// PageLines is the page length while paging is on (default 8).
	PageLines int
	// KeepPaging makes "terminal length 0" accepted but ignored: output
	// is paged with --More-- anyway.
	KeepPaging bool
	// ANSI puts escape sequences (bold, erase to end of line) in output.
	ANSI bool
	// EnableSecret makes enable ask for a password.
	EnableSecret string
	// Silent: the console negotiates telnet options, then never answers.
	Silent bool
	// InitialDialog: the first return shows the initial configuration
	// dialog question.
	InitialDialog bool
	// StartMode is the mode the console is left in: "user" (default),
	// "enable" or "config".
	StartMode string
	// SlowPause is the pause between the chunks of "show slow" (default
	// 300ms).
	SlowPause time.Duration
}

// IOS is a fake Cisco IOS router console. Its state (mode, paging,
// configuration) belongs to the console line, so it outlives a
// connection, as a real console session does. Commands may be
// abbreviated. Exec: enable, disable, terminal length|width N, show ip
// interface brief, show version, show running-config, show clock, show
// slow (chunks with pauses), show drop (the connection is closed in the
// middle of the output), show hang (never answers), clear counters
// ([confirm]), ping, configure terminal, write [memory], reload ([confirm]),
// exit. Configuration: interface,
// ip address, no shutdown, shutdown, description, hostname, router ospf,
// network, router-id, ip route, line, logging, banner (multi-line), do,
// exit, end, Ctrl-Z. Anything else is "% Invalid input detected".
type IOS struct {
	*Device
	opts IOSOptions

	mu         sync.Mutex
	hostname   string
	mode       string // user, enable, config, config-if, config-router, config-line
	paging     bool
	dialog     bool
	iface      string
	ifaces     []*iosIface
	config     []string
	banner     string
	lastOutput string
}

type iosIface struct {
	name, ip, mask string
	up             bool
	description    string
}

// NewIOS starts a fake IOS console.
func NewIOS(t testing.TB, o IOSOptions) *IOS {
	t.Helper()
	if o.Hostname == "" {
		o.Hostname = "R1"
	}
	if o.PageLines <= 0 {
		o.PageLines = 8
	}
	if o.SlowPause <= 0 {
		o.SlowPause = 300 * time.Millisecond
	}
	if o.StartMode == "" {
		o.StartMode = "user"
	}
	r := &IOS{opts: o, hostname: o.Hostname, mode: o.StartMode, paging: true, dialog: o.InitialDialog}
	for i := range 4 {
		r.ifaces = append(r.ifaces, &iosIface{name: fmt.Sprintf("GigabitEthernet0/%d", i)})
	}
	r.Device = newDevice(t, r.serveConn)
	return r
}

// Prompt returns the prompt the console shows now ("R1#").
func (r *IOS) Prompt() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.promptLocked()
}

// Mode returns the console's mode: user, enable, config, config-if, ...
func (r *IOS) Mode() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mode
}

// ConfigLines returns the configuration lines the router accepted, in
// order.
func (r *IOS) ConfigLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.config)
}

// Banner returns the motd banner text.
func (r *IOS) Banner() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.banner
}

// Paging reports whether output is paged.
func (r *IOS) Paging() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paging
}

// Interface returns the address and state of an interface
// ("GigabitEthernet0/0").
func (r *IOS) Interface(name string) (ip, mask string, up bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, i := range r.ifaces {
		if i.name == name {
			return i.ip, i.mask, i.up
		}
	}
	return "", "", false
}

func (r *IOS) promptLocked() string {
	switch r.mode {
	case "user":
		return r.hostname + ">"
	case "enable":
		return r.hostname + "#"
	}
	return r.hostname + "(" + r.mode + ")#"
}

func (r *IOS) serveConn(c *Conn) {
	c.Negotiate()
	if r.opts.Silent {
		c.Discard()
		return
	}
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		if !r.handle(c, line) {
			return
		}
	}
}

// out is what a command prints: lines, paged when paging is on.
func (r *IOS) print(c *Conn, lines ...string) bool {
	r.mu.Lock()
	paging, page := r.paging, r.opts.PageLines
	r.mu.Unlock()
	for i, l := range lines {
		if paging && i > 0 && i%page == 0 {
			c.Write(" --More-- ")
			k, err := c.ReadKey()
			if err != nil {
				return false
			}
			c.Write(strings.Repeat("\b", 10) + strings.Repeat(" ", 10) + strings.Repeat("\b", 10))
			if k != ' ' && k != '\r' {
				return true
			}
		}
		c.Write(l + "\r\n")
	}
	return true
}

// handle runs one typed line; false ends the connection.
func (r *IOS) handle(c *Conn, line string) bool {
	r.mu.Lock()
	mode, dialog := r.mode, r.dialog
	r.mu.Unlock()
	if dialog {
		return r.initialDialog(c, line)
	}
	if line != "^C" && line != "^Z" {
		c.Write(line)
	}
	c.Write("\r\n")
	w := words(line)
	ok := true
	switch {
	case line == "^C" || line == "^Z":
		if strings.HasPrefix(mode, "config") {
			r.setMode("enable")
			c.Write("\r\n")
		}
	case len(w) == 0:
	case strings.HasPrefix(mode, "config"):
		ok = r.configure(c, line, w)
	default:
		ok = r.exec(c, line, w)
	}
	if ok {
		c.Write(r.Prompt())
	}
	return ok
}

func (r *IOS) setMode(m string) {
	r.mu.Lock()
	r.mode = m
	r.mu.Unlock()
}

func (r *IOS) initialDialog(c *Conn, line string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if line == "" && r.lastOutput != "dialog" {
		r.lastOutput = "dialog"
		c.Write("\r\n         --- System Configuration Dialog ---\r\n\r\nWould you like to enter the initial configuration dialog? [yes/no]: ")
		return true
	}
	c.Write(line + "\r\n")
	if strings.HasPrefix("no", strings.ToLower(strings.TrimSpace(line))) && line != "" {
		r.dialog, r.lastOutput = false, ""
		c.Write("\r\n\r\nPress RETURN to get started!\r\n\r\n\r\n")
		return true
	}
	c.Write("% Please answer 'yes' or 'no'.\r\nWould you like to enter the initial configuration dialog? [yes/no]: ")
	return true
}

func invalid(c *Conn, line string) {
	c.Write(strings.Repeat(" ", min(len(line), 10)) + "^\r\n% Invalid input detected at '^' marker.\r\n\r\n")
}

// exec runs an exec-mode command.
func (r *IOS) exec(c *Conn, line string, w []string) bool {
	r.mu.Lock()
	mode := r.mode
	r.mu.Unlock()
	switch {
	case matches(w, "enable"):
		if mode == "user" && r.opts.EnableSecret != "" {
			return r.enablePassword(c)
		}
		r.setMode("enable")
	case matches(w, "disable"):
		r.setMode("user")
	case len(w) == 3 && matches(w, "terminal length *"):
		r.mu.Lock()
		r.paging = w[2] != "0" || r.opts.KeepPaging
		r.mu.Unlock()
	case len(w) == 3 && matches(w, "terminal width *"):
	case matches(w, "show ip interface brief"):
		return r.print(c, r.ipInterfaceBrief()...)
	case matches(w, "show version"):
		return r.showVersion(c)
	case matches(w, "show running-config") && mode == "enable":
		return r.print(c, r.runningConfig()...)
	case matches(w, "show clock"):
		c.Write("*10:11:12.345 UTC Mon Mar 1 2024\r\n")
	case matches(w, "show slow"):
		for i := range 4 {
			c.Write(fmt.Sprintf("slow line %d\r\nslow ", i))
			time.Sleep(r.opts.SlowPause)
			c.Write(fmt.Sprintf("tail %d\r\n", i))
		}
		c.Write("slow done\r\n")
	case matches(w, "show drop"):
		c.Write("Building the answer...\r\npartial line")
		c.Close()
		return false
	case matches(w, "show hang"):
		c.Discard()
		return false
	case matches(w, "clear counters") && mode == "enable":
		c.Write("Clear \"show interface\" counters on all interfaces [confirm]")
		k, err := c.ReadKey()
		if err != nil {
			return false
		}
		if k == 0x03 {
			c.Write("^C\r\n")
		} else {
			c.Write("\r\n")
		}
	case len(w) == 2 && matches(w, "ping *"):
		c.Write("Type escape sequence to abort.\r\nSending 5, 100-byte ICMP Echos to " + w[1] +
			", timeout is 2 seconds:\r\n!!!!!\r\nSuccess rate is 100 percent (5/5), round-trip min/avg/max = 1/2/4 ms\r\n")
	case len(w) == 2 && matches(w, "configure terminal") && mode == "enable":
		c.Write("Enter configuration commands, one per line.  End with CNTL/Z.\r\n")
		r.setMode("config")
	case matches(w, "exit"):
		r.setMode("user")
		c.Write("\r\n" + r.hostname + " con0 is now available\r\n\r\n\r\n\r\n\r\n\r\nPress RETURN to get started.\r\n\r\n\r\n")
	case (matches(w, "write") || matches(w, "write memory")) && mode == "enable":
		c.Write("Building configuration...\r\n[OK]\r\n")
	case matches(w, "reload") && mode == "enable":
		c.Write("Proceed with reload? [confirm]")
		if _, err := c.ReadKey(); err != nil {
			return false
		}
		c.Write("\r\n")
	default:
		invalid(c, line)
	}
	return true
}

func (r *IOS) enablePassword(c *Conn) bool {
	for range 3 {
		c.Write("Password: ")
		line, err := c.ReadLine()
		if err != nil {
			return false
		}
		c.Write("\r\n")
		if line == "^C" {
			return true
		}
		if line == r.opts.EnableSecret {
			r.setMode("enable")
			return true
		}
	}
	c.Write("% Bad secrets\r\n\r\n")
	return true
}

func (r *IOS) ipInterfaceBrief() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	bold, reset := "", ""
	if r.opts.ANSI {
		bold, reset = "\x1b[1m", "\x1b[0m\x1b[K"
	}
	out := []string{bold + fmt.Sprintf("%-26s %-15s %-3s %-6s %-21s %s", "Interface", "IP-Address", "OK?", "Method", "Status", "Protocol") + reset}
	for _, i := range r.ifaces {
		ip, method, status, proto := "unassigned", "unset", "administratively down", "down"
		if i.ip != "" {
			ip, method = i.ip, "manual"
		}
		if i.up {
			status, proto = "up", "up"
		}
		out = append(out, fmt.Sprintf("%-26s %-15s %-3s %-6s %-21s %s", i.name, ip, "YES", method, status, proto))
	}
	return out
}

func (r *IOS) showVersion(c *Conn) bool {
	lines := []string{
		"Cisco IOS Software, IOSv Software (VIOS-ADVENTERPRISEK9-M), Version 15.9(3)M6, RELEASE SOFTWARE (fc1)",
		"Technical Support: http://www.cisco.com/techsupport",
		"Copyright (c) 1986-2022 by Cisco Systems, Inc.",
		"Compiled Tue 29-Mar-22 10:57 by prod_rel_team",
		"",
		"ROM: Bootstrap program is IOSv",
		"",
		r.hostname + " uptime is 12 minutes",
		"System returned to ROM by reload",
		"System image file is \"flash0:/vios-adventerprisek9-m\"",
		"Last reload reason: Unknown reason",
		"",
		"Cisco IOSv (revision 1.0) with  with 460017K/62464K bytes of memory.",
		"Processor board ID 9KJ2B4LQ8DQ3AZ9WTZ2YF",
		"4 Gigabit Ethernet interfaces",
		"DRAM configuration is 72 bits wide with parity disabled.",
		"256K bytes of non-volatile configuration memory.",
		"2097152K bytes of ATA System CompactFlash 0 (Read/Write)",
		"",
		"Configuration register is 0x0",
	}
	// telnet commands in the middle of the output: NOP, GA and a
	// subnegotiation, which the client must drop
	c.WriteRaw([]byte{tnIAC, tnNOP, tnIAC, tnGA, tnIAC, tnSB, optTType, 1, tnIAC, tnSE})
	return r.print(c, lines...)
}

func (r *IOS) runningConfig() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{"Building configuration...", "", "Current configuration : 1024 bytes", "!", "hostname " + r.hostname, "!"}
	for _, i := range r.ifaces {
		out = append(out, "interface "+i.name)
		if i.description != "" {
			out = append(out, " description "+i.description)
		}
		if i.ip != "" {
			out = append(out, " ip address "+i.ip+" "+i.mask)
		} else {
			out = append(out, " no ip address")
		}
		if !i.up {
			out = append(out, " shutdown")
		}
		out = append(out, "!")
	}
	if r.banner != "" {
		out = append(out, "banner motd ^C"+r.banner+"^C")
	}
	return append(out, "!", "end")
}

// ifaceName expands an abbreviated interface name (g0/1, Gi0/1, lo0).
func ifaceName(s string) string {
	l := strings.ToLower(s)
	i := strings.IndexAny(l, "0123456789")
	if i <= 0 {
		return s
	}
	kind, num := l[:i], strings.TrimSpace(l[i:])
	for _, full := range []string{"GigabitEthernet", "FastEthernet", "Ethernet", "Loopback", "Serial"} {
		if strings.HasPrefix(strings.ToLower(full), kind) {
			return full + num
		}
	}
	return s
}

// configure runs a configuration-mode line.
func (r *IOS) configure(c *Conn, line string, w []string) bool {
	r.mu.Lock()
	mode := r.mode
	r.mu.Unlock()
	accept := func() {
		r.mu.Lock()
		r.config = append(r.config, strings.TrimSpace(line))
		r.mu.Unlock()
	}
	switch {
	case matches(w, "end"):
		r.setMode("enable")
		c.Write("\r\n*Mar  1 00:12:34.567: %SYS-5-CONFIG_I: Configured from console by console\r\n")
	case matches(w, "exit"):
		if mode == "config" {
			r.setMode("enable")
		} else {
			r.setMode("config")
		}
	case w[0] == "do" && len(w) > 1:
		rest := strings.TrimSpace(line[strings.Index(strings.ToLower(line), "do")+2:])
		r.mu.Lock()
		saved := r.mode
		r.mode = "enable"
		r.mu.Unlock()
		ok := r.exec(c, rest, words(rest))
		r.mu.Lock()
		if r.mode == "enable" {
			r.mode = saved
		}
		r.mu.Unlock()
		return ok
	case len(w) == 2 && matches(w, "interface *"), len(w) == 3 && matches(w, "interface * *"):
		name := ifaceName(strings.Join(strings.Fields(line)[1:], ""))
		r.mu.Lock()
		found := false
		for _, i := range r.ifaces {
			found = found || i.name == name
		}
		if !found && strings.HasPrefix(name, "Loopback") {
			r.ifaces = append(r.ifaces, &iosIface{name: name, up: true})
			found = true
		}
		r.mu.Unlock()
		if !found {
			invalid(c, line)
			return true
		}
		accept()
		r.mu.Lock()
		r.mode, r.iface = "config-if", name
		r.mu.Unlock()
	case mode == "config-if" && len(w) == 4 && matches(w, "ip address * *"):
		accept()
		r.withIface(func(i *iosIface) { i.ip, i.mask = w[2], w[3] })
	case mode == "config-if" && matches(w, "no shutdown"):
		accept()
		r.withIface(func(i *iosIface) { i.up = true })
		c.Write("*Mar  1 00:12:30.001: %LINK-3-UPDOWN: Interface " + r.currentIface() + ", changed state to up\r\n")
	case mode == "config-if" && matches(w, "shutdown"):
		accept()
		r.withIface(func(i *iosIface) { i.up = false })
	case mode == "config-if" && len(w) >= 2 && matches(w[:1], "description"):
		accept()
		r.withIface(func(i *iosIface) { i.description = strings.TrimSpace(line[strings.Index(line, " ")+1:]) })
	case len(w) == 2 && matches(w, "hostname *"):
		accept()
		r.mu.Lock()
		r.hostname = strings.Fields(line)[1]
		r.mu.Unlock()
	case len(w) == 3 && matches(w, "router ospf *"):
		accept()
		r.setMode("config-router")
	case mode == "config-router" && len(w) >= 2 && (matches(w[:1], "network") || matches(w[:1], "router-id")):
		accept()
	case len(w) >= 4 && matches(w[:2], "ip route"):
		accept()
	case len(w) >= 2 && matches(w[:1], "line"):
		accept()
		r.setMode("config-line")
	case len(w) >= 1 && matches(w[:1], "logging"):
		accept()
	case len(w) >= 3 && matches(w[:2], "banner motd"):
		accept()
		return r.readBanner(c, line)
	default:
		invalid(c, line)
	}
	return true
}

func (r *IOS) withIface(f func(*iosIface)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, i := range r.ifaces {
		if i.name == r.iface {
			f(i)
		}
	}
}

func (r *IOS) currentIface() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.iface
}

// readBanner reads a banner's text up to its delimiter, the first
// character after "banner motd".
func (r *IOS) readBanner(c *Conn, first string) bool {
	f := strings.Fields(first)
	rest := strings.TrimSpace(first[strings.Index(first, f[2]):])
	delim := rest[:1]
	text := rest[1:]
	if i := strings.Index(text, delim); i >= 0 {
		r.mu.Lock()
		r.banner = text[:i]
		r.mu.Unlock()
		return true
	}
	c.Write("Enter TEXT message.  End with the character '" + delim + "'.\r\n")
	var body []string
	if text != "" {
		body = append(body, text)
	}
	for {
		line, err := c.ReadLine()
		if err != nil {
			return false
		}
		c.Write(line + "\r\n")
		r.mu.Lock()
		r.config = append(r.config, line)
		r.mu.Unlock()
		if i := strings.Index(line, delim); i >= 0 {
			if i > 0 {
				body = append(body, line[:i])
			}
			break
		}
		body = append(body, line)
	}
	r.mu.Lock()
	r.banner = strings.Join(body, "\n")
	r.mu.Unlock()
	return true
}
