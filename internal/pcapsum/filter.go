package pcapsum

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Bounds of a filter.
const (
	maxFilterLen   = 200
	maxFilterAtoms = 16
)

// protocols a filter names, and the bit of each in a packet's protos.
var filterProtocols = map[string]proto{
	"arp": pARP, "ip": pIPv4, "ipv4": pIPv4, "ipv6": pIPv6, "icmp": pICMP | pICMP6, "icmp6": pICMP6,
	"tcp": pTCP, "udp": pUDP, "ospf": pOSPF, "bgp": pBGP, "stp": pSTP, "cdp": pCDP, "lldp": pLLDP, "vlan": pVLAN,
}

// Filter keeps the packets a filter expression matches (see the package
// documentation for the grammar). The zero Filter, or nil, keeps every
// packet.
type Filter struct {
	text    string
	clauses [][]atom // or of ands
}

// atom is one primitive of a filter, maybe negated.
type atom struct {
	not   bool
	proto proto
	ip    netip.Addr
	mac   net.HardwareAddr
	port  int // -1: none
	vlan  int // -1: none
}

// String returns the filter as given (trimmed).
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

// ParseFilter parses a filter expression; "" (or only spaces) gives nil,
// which keeps every packet. A malformed filter is an error saying what
// is wrong and what is allowed.
func ParseFilter(s string) (*Filter, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if len(s) > maxFilterLen {
		return nil, fmt.Errorf("filter longer than %d characters", maxFilterLen)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return nil, errors.New("filter: only printable ASCII is allowed")
		}
	}
	words := strings.Fields(strings.ToLower(s))
	f := &Filter{text: s}
	var clause []atom
	atoms := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch w {
		case "or":
			if len(clause) == 0 || i == len(words)-1 {
				return nil, errors.New(`filter: "or" needs a condition on both sides`)
			}
			f.clauses = append(f.clauses, clause)
			clause = nil
			continue
		case "and":
			if len(clause) == 0 || i == len(words)-1 || words[i+1] == "or" || words[i+1] == "and" {
				return nil, errors.New(`filter: "and" needs a condition on both sides`)
			}
			continue
		}
		a := atom{port: -1, vlan: -1}
		if w == "not" {
			a.not = true
			i++
			if i == len(words) {
				return nil, errors.New(`filter: "not" needs a condition after it`)
			}
			w = words[i]
		}
		next := func(what string) (string, error) {
			i++
			if i == len(words) {
				return "", fmt.Errorf("filter: %q needs %s after it", w, what)
			}
			return words[i], nil
		}
		switch {
		case w == "host":
			v, err := next("an IP or MAC address")
			if err != nil {
				return nil, err
			}
			if !parseAddress(v, &a) {
				return nil, fmt.Errorf("filter: %q is not an IP or MAC address", v)
			}
		case w == "port":
			v, err := next("a port number")
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return nil, fmt.Errorf("filter: port %q is not a number from 0 to 65535", v)
			}
			a.port = n
		case w == "vlan" && i+1 < len(words) && isNumber(words[i+1]):
			n, _ := strconv.Atoi(words[i+1])
			if n < 0 || n > 4095 {
				return nil, fmt.Errorf("filter: vlan %q is not a number from 0 to 4095", words[i+1])
			}
			i++
			a.vlan = n
		case filterProtocols[w] != 0:
			a.proto = filterProtocols[w]
		case parseAddress(w, &a):
		default:
			return nil, fmt.Errorf("filter: unknown word %q; use a protocol (arp, ip, ipv6, icmp, icmp6, tcp, udp, ospf, bgp, stp, cdp, lldp, vlan), host ADDRESS, an address, port N, vlan N, joined by and, or, not", w)
		}
		atoms++
		if atoms > maxFilterAtoms {
			return nil, fmt.Errorf("filter: more than %d conditions", maxFilterAtoms)
		}
		clause = append(clause, a)
	}
	if len(clause) == 0 {
		return nil, errors.New("filter: no condition")
	}
	f.clauses = append(f.clauses, clause)
	return f, nil
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// parseAddress reads an IP or MAC address into a.
func parseAddress(s string, a *atom) bool {
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		a.ip = ip.Unmap()
		return true
	}
	if mac, err := net.ParseMAC(s); err == nil && len(mac) == 6 {
		a.mac = mac
		return true
	}
	return false
}

// match reports whether the filter keeps p.
func (f *Filter) match(p *frame) bool {
	if f == nil || len(f.clauses) == 0 {
		return true
	}
	for _, c := range f.clauses {
		all := true
		for _, a := range c {
			if a.match(p) == a.not {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func (a *atom) match(p *frame) bool {
	switch {
	case a.proto != 0:
		return p.protos&a.proto != 0
	case a.ip.IsValid():
		return p.src == a.ip || p.dst == a.ip || (p.protos&pARP != 0 && (p.arpSender == a.ip || p.arpTarget == a.ip))
	case a.mac != nil:
		return string(p.srcMAC[:]) == string(a.mac) || string(p.dstMAC[:]) == string(a.mac)
	case a.port >= 0:
		return p.protos&(pTCP|pUDP) != 0 && (int(p.sport) == a.port || int(p.dport) == a.port)
	case a.vlan >= 0:
		return p.vlan == a.vlan
	}
	return false
}
