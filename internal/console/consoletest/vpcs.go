package consoletest

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// VPCS is a fake VPCS console: prompt "PC1> ", lines ended by LF only.
// Commands: show ip, ip <addr>/<len> [<gateway>], ping <addr>, save;
// anything else is a "Bad command".
type VPCS struct {
	*Device

	mu      sync.Mutex
	name    string
	ip      netip.Prefix
	gateway string
}

// NewVPCS starts a fake VPCS console for the PC name.
func NewVPCS(t testing.TB, name string) *VPCS {
	t.Helper()
	p := &VPCS{name: name}
	p.Device = newDevice(t, p.serveConn)
	return p
}

// IP returns the address and gateway set with "ip".
func (p *VPCS) IP() (netip.Prefix, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ip, p.gateway
}

func (p *VPCS) serveConn(c *Conn) {
	c.WriteRaw([]byte{tnIAC, tnWILL, optEcho, tnIAC, tnWILL, optSGA})
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		c.Write(line + "\n")
		p.run(c, line)
		c.Write("\n" + p.name + "> ")
	}
}

func (p *VPCS) run(c *Conn, line string) {
	w := words(line)
	switch {
	case len(w) == 0:
	case matches(w, "show ip"):
		p.mu.Lock()
		ip, gw := "0.0.0.0/0", p.gateway
		if p.ip.IsValid() {
			ip = p.ip.String()
		}
		if gw == "" {
			gw = "0.0.0.0"
		}
		p.mu.Unlock()
		c.Write(fmt.Sprintf("\nNAME        : %s[1]\nIP/MASK     : %s\nGATEWAY     : %s\nDNS         : \n"+
			"MAC         : 00:50:79:66:68:00\nLPORT       : 20000\nRHOST:PORT  : 127.0.0.1:20001\nMTU         : 1500\n", p.name, ip, gw))
	case len(w) >= 2 && w[0] == "ip":
		pfx, err := netip.ParsePrefix(w[1])
		if err != nil {
			c.Write("Invalid address\n")
			return
		}
		gw := ""
		if len(w) > 2 {
			gw = w[2]
		}
		c.Write("Checking for duplicate address...\n")
		time.Sleep(200 * time.Millisecond)
		p.mu.Lock()
		p.ip, p.gateway = pfx, gw
		p.mu.Unlock()
		c.Write(fmt.Sprintf("%s : %s %s gateway %s\n", p.name, pfx.Addr(), bitsToMask(pfx.Bits()), gw))
	case len(w) == 2 && matches(w, "ping *"):
		for i := 1; i <= 5; i++ {
			c.Write(fmt.Sprintf("84 bytes from %s icmp_seq=%d ttl=64 time=0.%d ms\n", w[1], i, i))
		}
	case matches(w, "save"):
		c.Write("Saving startup configuration to startup.vpc\n.  done\n")
	default:
		c.Write(fmt.Sprintf("Bad command: \"%s\". Use ? for help.\n", strings.TrimSpace(line)))
	}
}

func bitsToMask(bits int) string {
	var m [4]byte
	for i := range bits {
		m[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(m).String()
}
