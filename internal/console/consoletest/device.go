// Package consoletest runs fake device consoles for tests: real TCP
// listeners on 127.0.0.1 speaking telnet (option negotiation included), a
// Cisco-IOS-like router (IOS) and a VPCS-like PC (VPCS). They record every
// line received, the telnet answers of the client, and when connections
// are closed.
package consoletest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Telnet bytes.
const (
	tnSE   = 240
	tnNOP  = 241
	tnGA   = 249
	tnSB   = 250
	tnWILL = 251
	tnWONT = 252
	tnDO   = 253
	tnDONT = 254
	tnIAC  = 255

	optEcho  = 1
	optSGA   = 3
	optTType = 24
	optNAWS  = 31
)

var verbs = map[byte]string{tnWILL: "WILL", tnWONT: "WONT", tnDO: "DO", tnDONT: "DONT"}

// Device is a fake console: a listener whose connections are served by a
// handler.
type Device struct {
	ln     net.Listener
	handle func(c *Conn)

	mu       sync.Mutex
	raw      []byte
	lines    []string
	telnet   []string
	accepted int
	open     int
	conns    map[*Conn]bool
	changed  chan struct{} // closed and replaced at every accept and close
	wg       sync.WaitGroup
}

// NewScripted starts a console whose every connection is served by
// handle: a console that answers what a test scripts (one that never
// shows a prompt, or prints instructions to the model). The handler may
// call Negotiate, Write and ReadLine; the connection is closed when it
// returns.
func NewScripted(t testing.TB, handle func(c *Conn)) *Device {
	t.Helper()
	return newDevice(t, handle)
}

// newDevice listens on 127.0.0.1 and serves each connection with handle;
// the listener and the connections are closed when the test ends.
func newDevice(t testing.TB, handle func(c *Conn)) *Device {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &Device{ln: ln, handle: handle, conns: map[*Conn]bool{}, changed: make(chan struct{})}
	d.wg.Add(1)
	go d.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		d.mu.Lock()
		for c := range d.conns {
			_ = c.c.Close()
		}
		d.mu.Unlock()
		d.wg.Wait()
	})
	return d
}

func (d *Device) serve() {
	defer d.wg.Done()
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			return
		}
		c := &Conn{d: d, c: nc, r: bufio.NewReader(nc)}
		d.mu.Lock()
		d.accepted++
		d.open++
		d.conns[c] = true
		d.signal()
		d.mu.Unlock()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer func() {
				_ = nc.Close()
				d.mu.Lock()
				d.open--
				delete(d.conns, c)
				d.signal()
				d.mu.Unlock()
			}()
			d.handle(c)
		}()
	}
}

// signal wakes the waiters (d.mu held).
func (d *Device) signal() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Port is the TCP port of the console.
func (d *Device) Port() int { return d.ln.Addr().(*net.TCPAddr).Port }

// Addr is the console address, host:port.
func (d *Device) Addr() string { return d.ln.Addr().String() }

// Lines returns every line received, in order, over all connections
// (control characters as "^C", "^Z").
func (d *Device) Lines() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.lines)
}

// Raw returns every data byte received, over all connections, as it
// came on the wire with the telnet commands removed: the bytes a
// device's CLI would read (control characters included).
func (d *Device) Raw() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.raw)
}

// Received reports whether a line equal to line (trimmed) was received.
func (d *Device) Received(line string) bool {
	for _, l := range d.Lines() {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// Telnet returns the telnet negotiation the clients sent ("DO 1",
// "WONT 31"), in order.
func (d *Device) Telnet() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.telnet)
}

// Connections returns the number of connections accepted so far.
func (d *Device) Connections() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.accepted
}

// OpenConnections returns the number of connections not yet closed.
func (d *Device) OpenConnections() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.open
}

// WaitClosed waits up to timeout until at least one connection was
// accepted and every connection is closed.
func (d *Device) WaitClosed(timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		d.mu.Lock()
		done, ch := d.accepted > 0 && d.open == 0, d.changed
		d.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// WaitConnected waits up to timeout until n connections were accepted.
func (d *Device) WaitConnected(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		d.mu.Lock()
		done, ch := d.accepted >= n, d.changed
		d.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// errClosed is the error of a read on a connection the device closed.
var errClosed = errors.New("connection closed")

// Conn is one client connection, as the device sees it.
type Conn struct {
	d      *Device
	c      net.Conn
	r      *bufio.Reader
	afterC bool // the last line ended with CR: a LF or NUL after it is dropped
}

// Negotiate sends the option requests of a console server: the server
// will echo and suppress go-ahead, and asks the client for its window size
// and terminal type and to suppress go-ahead.
func (c *Conn) Negotiate() {
	c.WriteRaw([]byte{tnIAC, tnWILL, optEcho, tnIAC, tnWILL, optSGA, tnIAC, tnDO, optNAWS, tnIAC, tnDO, optTType, tnIAC, tnDO, optSGA})
}

// WriteRaw writes bytes as they are.
func (c *Conn) WriteRaw(b []byte) {
	_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.c.Write(b)
}

// Write writes text.
func (c *Conn) Write(s string) { c.WriteRaw([]byte(s)) }

// Close closes the connection from the device's side.
func (c *Conn) Close() { _ = c.c.Close() }

// ReadByte returns the next data byte, telnet commands removed (and
// recorded).
func (c *Conn) ReadByte() (byte, error) {
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			return 0, errClosed
		}
		if b != tnIAC {
			c.record(b)
			return b, nil
		}
		cmd, err := c.r.ReadByte()
		if err != nil {
			return 0, errClosed
		}
		switch cmd {
		case tnIAC:
			c.record(tnIAC)
			return tnIAC, nil
		case tnWILL, tnWONT, tnDO, tnDONT:
			opt, err := c.r.ReadByte()
			if err != nil {
				return 0, errClosed
			}
			c.d.mu.Lock()
			c.d.telnet = append(c.d.telnet, fmt.Sprintf("%s %d", verbs[cmd], opt))
			c.d.mu.Unlock()
		case tnSB:
			for { // until IAC SE
				b, err := c.r.ReadByte()
				if err != nil {
					return 0, errClosed
				}
				if b == tnIAC {
					if b, err = c.r.ReadByte(); err != nil {
						return 0, errClosed
					}
					if b == tnSE {
						break
					}
				}
			}
		}
	}
}

// record adds a data byte to the device's raw record.
func (c *Conn) record(b byte) {
	c.d.mu.Lock()
	c.d.raw = append(c.d.raw, b)
	c.d.mu.Unlock()
}

// ReadKey returns the next key pressed (a data byte; CR LF is one CR).
func (c *Conn) ReadKey() (byte, error) {
	for {
		b, err := c.ReadByte()
		if err != nil {
			return 0, err
		}
		if c.afterC && (b == '\n' || b == 0) {
			c.afterC = false
			continue
		}
		c.afterC = b == '\r'
		return b, nil
	}
}

// ReadLine returns the next line the client typed (ended by CR, LF, CR
// LF or CR NUL), and records it. Ctrl-C and Ctrl-Z end a line at once
// and are returned as "^C" and "^Z".
func (c *Conn) ReadLine() (string, error) {
	var b []byte
	for {
		k, err := c.ReadKey()
		if err != nil {
			return "", err
		}
		line, done := "", true
		switch k {
		case '\r', '\n':
			line = string(b)
		case 0x03:
			line = "^C"
		case 0x1a:
			line = "^Z"
		default:
			b, done = append(b, k), false
		}
		if done {
			c.d.mu.Lock()
			c.d.lines = append(c.d.lines, line)
			c.d.mu.Unlock()
			return line, nil
		}
	}
}

// Discard reads and drops everything until the connection closes.
func (c *Conn) Discard() {
	for {
		if _, err := c.ReadByte(); err != nil {
			return
		}
	}
}

// words returns the lowercased words of s.
func words(s string) []string { return strings.Fields(strings.ToLower(s)) }

// matches reports whether the typed words abbreviate the pattern words
// one by one ("sh ip int br" abbreviates "show ip interface brief"); a
// pattern word "*" takes any one word.
func matches(typed []string, pattern string) bool {
	p := strings.Fields(pattern)
	if len(p) != len(typed) {
		return false
	}
	for i := range p {
		if p[i] != "*" && !strings.HasPrefix(p[i], typed[i]) {
			return false
		}
	}
	return true
}
