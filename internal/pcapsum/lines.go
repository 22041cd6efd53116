package pcapsum

import (
	"fmt"
	"net"
	"strings"
)

// line renders f in one short line: seconds since the first packet,
// source > destination, protocol and details.
func (a *Analyzer) line(f *frame) string {
	src, dst := a.ends(f)
	var b strings.Builder
	fmt.Fprintf(&b, "%.3f ", f.ts.Sub(a.first).Seconds())
	if f.vlan >= 0 {
		fmt.Fprintf(&b, "vlan %d ", f.vlan)
	}
	switch {
	case f.protos&pARP != 0:
		switch f.arpOp {
		case 1:
			if f.arpSender == f.arpTarget {
				fmt.Fprintf(&b, "ARP gratuitous %s is-at %s", f.arpSender, net.HardwareAddr(f.arpSenderMAC[:]))
			} else {
				fmt.Fprintf(&b, "ARP who-has %s tell %s", f.arpTarget, f.arpSender)
			}
		case 2:
			fmt.Fprintf(&b, "ARP reply %s is-at %s", f.arpSender, net.HardwareAddr(f.arpSenderMAC[:]))
		default:
			fmt.Fprintf(&b, "ARP op %d %s > %s", f.arpOp, src, dst)
		}
	case f.protos&pOSPF != 0:
		fmt.Fprintf(&b, "%s > %s OSPF", src, dst)
		if h, ok := parseOSPF(f.ospf); ok {
			fmt.Fprintf(&b, " %s router %s area %s", ospfTypes[h.typ], h.routerID, h.area)
			if hl, ok := parseHello(h.body); h.typ == 1 && ok {
				fmt.Fprintf(&b, " hello %ds dead %ds mask %s", hl.hello, hl.dead, hl.mask)
			}
			if mtu, ok := parseDBDMTU(h.body); h.typ == 2 && ok {
				fmt.Fprintf(&b, " mtu %d", mtu)
			}
		}
	case f.protos&pICMP != 0:
		fmt.Fprintf(&b, "%s > %s ICMP %s", src, dst, icmpText(f.icmpType, f.icmpCode))
		if f.icmpType == 0 || f.icmpType == 8 {
			fmt.Fprintf(&b, " id %d seq %d ttl %d", f.icmpID, f.icmpSeq, f.ttl)
		}
	case f.protos&pICMP6 != 0:
		fmt.Fprintf(&b, "%s > %s ICMPv6 type %d code %d", src, dst, f.icmpType, f.icmpCode)
	case f.protos&pTCP != 0:
		fmt.Fprintf(&b, "%s:%d > %s:%d TCP [%s] seq %d len %d", src, f.sport, dst, f.dport, tcpFlagText(f.tcpFlags), f.tcpSeq, f.tcpPayload)
		if f.protos&pBGP != 0 && len(f.bgp) > 0 {
			var names []string
			parseBGP(f.bgp, func(m bgpMessage) {
				if len(names) < 4 {
					names = append(names, bgpTypes[m.typ])
				}
			})
			if len(names) > 0 {
				fmt.Fprintf(&b, " BGP %s", strings.Join(names, ","))
			}
		}
	case f.protos&pUDP != 0:
		fmt.Fprintf(&b, "%s:%d > %s:%d UDP", src, f.sport, dst, f.dport)
	case f.protos&pSTP != 0:
		if p, ok := parseBPDU(f.bpdu); ok && p.typ != 0x80 {
			fmt.Fprintf(&b, "%s STP bpdu root %s cost %d bridge %s port %s", src, p.rootID, p.rootCost, p.bridgeID, p.portID)
			if p.role != "" {
				fmt.Fprintf(&b, " role %s", p.role)
			}
		} else {
			fmt.Fprintf(&b, "%s STP topology change notification", src)
		}
	case f.protos&pCDP != 0:
		n, _ := parseCDP(f.cdp)
		fmt.Fprintf(&b, "%s CDP device %s port %s", src, n.DeviceID, n.PortID)
	case f.protos&pLLDP != 0:
		n, _ := parseLLDP(f.lldp)
		fmt.Fprintf(&b, "%s LLDP device %s port %s", src, n.DeviceID, n.PortID)
	default:
		fmt.Fprintf(&b, "%s > %s %s len %d", src, dst, strings.ToUpper(label(f)), f.length)
	}
	s := b.String()
	if len(s) > maxLine {
		s = s[:maxLine] + "..."
	}
	return s
}

func icmpText(t, c uint8) string {
	switch t {
	case 0:
		return "echo reply"
	case 8:
		return "echo request"
	case 3:
		if r, ok := icmpReasons[c]; ok {
			return "unreachable: " + r
		}
		return fmt.Sprintf("unreachable code %d", c)
	case 11:
		return "time exceeded"
	case 5:
		return "redirect"
	}
	return fmt.Sprintf("type %d code %d", t, c)
}

func tcpFlagText(fl uint8) string {
	var s []string
	for _, x := range []struct {
		bit  uint8
		name string
	}{{tcpSYN, "SYN"}, {tcpFIN, "FIN"}, {tcpRST, "RST"}, {tcpPSH, "PSH"}, {tcpACK, "ACK"}} {
		if fl&x.bit != 0 {
			s = append(s, x.name)
		}
	}
	return strings.Join(s, ",")
}
