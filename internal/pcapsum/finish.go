package pcapsum

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// maxFindings bounds Summary.Findings.
const maxFindings = 20

// Summary returns what the packets added so far say; Stopped is left for
// the reader to set.
func (a *Analyzer) Summary() Summary {
	s := Summary{
		LinkType: a.linkType.String(), Filter: a.o.Filter.String(),
		Packets: a.kept, Scanned: a.scanned, Bytes: a.bytes, Malformed: a.malformed,
		Protocols: map[string]int{}, Findings: []string{}, Conversations: []Conversation{}, FirstPackets: a.lines,
	}
	if s.FirstPackets == nil {
		s.FirstPackets = []string{}
	}
	if !a.first.IsZero() {
		s.FirstPacket = a.first.UTC().Format(time.RFC3339Nano)
		s.DurationSeconds = float64(a.last.Sub(a.first).Milliseconds()) / 1000
	}
	for i, p := range protoNames {
		if a.protos[i] > 0 {
			s.Protocols[p.name] = a.protos[i]
		}
	}
	for k, c := range a.convs {
		s.Conversations = append(s.Conversations, Conversation{Src: k.src, Dst: k.dst, Protocol: k.proto, Packets: c.packets, Bytes: c.bytes})
	}
	s.ConversationsTotal = len(s.Conversations)
	slices.SortFunc(s.Conversations, func(x, y Conversation) int {
		return cmp.Or(cmp.Compare(y.Packets, x.Packets), cmp.Compare(x.Src, y.Src), cmp.Compare(x.Dst, y.Dst), cmp.Compare(x.Protocol, y.Protocol))
	})
	s.Conversations = s.Conversations[:min(len(s.Conversations), a.o.Top)]

	var fs findings
	a.arpSummary(&s, &fs)
	a.icmpSummary(&s, &fs)
	a.ospfSummary(&s, &fs)
	a.bgpSummary(&s, &fs)
	a.stpSummary(&s, &fs)
	a.cdpSummary(&s, &fs)
	a.tcpSummary(&s, &fs)
	s.Findings = fs.list
	if fs.more > 0 {
		s.Findings = append(s.Findings, fmt.Sprintf("(%d more findings left out)", fs.more))
	}
	return s
}

type findings struct {
	list []string
	more int
}

func (f *findings) add(format string, args ...any) {
	if len(f.list) >= maxFindings {
		f.more++
		return
	}
	f.list = append(f.list, fmt.Sprintf(format, args...))
}

func (a *Analyzer) arpSummary(s *Summary, fs *findings) {
	if a.arpReq+a.arpRep == 0 {
		return
	}
	sum := &ARPSummary{Requests: a.arpReq, Replies: a.arpRep, Gratuitous: a.arpGrat}
	for k, n := range a.arpAsks {
		if !a.arpReplied[k.target] {
			sum.Unanswered = append(sum.Unanswered, ARPAsk{Target: k.target.String(), AskedBy: k.sender.String(), Requests: n})
		}
	}
	slices.SortFunc(sum.Unanswered, func(x, y ARPAsk) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.Target, y.Target), cmp.Compare(x.AskedBy, y.AskedBy))
	})
	sum.Unanswered = sum.Unanswered[:min(len(sum.Unanswered), maxListed)]
	for _, u := range sum.Unanswered {
		fs.add("ARP: %s asked for %s %d time(s) without a reply (that host is down, absent, or in another VLAN or subnet)", u.AskedBy, u.Target, u.Requests)
	}
	ips := make([]netip.Addr, 0)
	for ip, macs := range a.arpMACs {
		if len(macs) > 1 {
			ips = append(ips, ip)
		}
	}
	slices.SortFunc(ips, func(x, y netip.Addr) int { return x.Compare(y) })
	for _, ip := range ips[:min(len(ips), maxListed)] {
		sum.DuplicateIPs = append(sum.DuplicateIPs, DuplicateIP{IP: ip.String(), MACs: a.arpMACs[ip]})
		fs.add("ARP: %s is claimed by %d MACs (%s): a duplicate IP address", ip, len(a.arpMACs[ip]), strings.Join(a.arpMACs[ip], ", "))
	}
	s.ARP = sum
}

func (a *Analyzer) icmpSummary(s *Summary, fs *findings) {
	if a.echoReq+a.echoRep+len(a.icmpErrs)+a.redirects == 0 {
		return
	}
	sum := &ICMPSummary{EchoRequests: a.echoReq, EchoReplies: a.echoRep, Redirects: a.redirects}
	pending := map[pairKey]int{}
	for k := range a.echoPending {
		pending[pairKey{k.src, k.dst}]++
	}
	for k, n := range pending {
		sum.Unanswered = append(sum.Unanswered, EchoPair{Src: k.src.String(), Dst: k.dst.String(), Requests: n})
	}
	slices.SortFunc(sum.Unanswered, func(x, y EchoPair) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.Src, y.Src), cmp.Compare(x.Dst, y.Dst))
	})
	sum.Unanswered = sum.Unanswered[:min(len(sum.Unanswered), maxListed)]
	for _, u := range sum.Unanswered {
		fs.add("ICMP: %d echo request(s) from %s to %s without a reply on this link", u.Requests, u.Src, u.Dst)
	}
	for _, k := range a.icmpErrOrder {
		e := ICMPError{From: k.from.String(), Reason: k.reason, Count: a.icmpErrs[k]}
		if k.about.IsValid() {
			e.About = k.about.String()
		}
		ttl := strings.Contains(k.reason, "exceeded")
		switch {
		case ttl && len(sum.TimeExceeded) < maxListed:
			sum.TimeExceeded = append(sum.TimeExceeded, e)
		case !ttl && len(sum.Unreachable) < maxListed:
			sum.Unreachable = append(sum.Unreachable, e)
		default:
			continue
		}
		about := ""
		if e.About != "" {
			about = " for " + e.About
		}
		fs.add("ICMP: %s reports %s%s (%d time(s))", e.From, e.Reason, about, e.Count)
	}
	s.ICMP = sum
}

func (a *Analyzer) ospfSummary(s *Summary, fs *findings) {
	if len(a.ospfTypes) == 0 {
		return
	}
	sum := &OSPFSummary{Packets: a.ospfTypes, Routers: []OSPFRouter{}}
	for _, k := range a.ospfOrder {
		sum.Routers = append(sum.Routers, *a.ospf[k])
	}
	slices.SortStableFunc(sum.Routers, func(x, y OSPFRouter) int { return cmp.Compare(x.RouterID, y.RouterID) })
	sum.Routers = sum.Routers[:min(len(sum.Routers), maxListed)]
	who := func(r OSPFRouter) string { return r.RouterID + " (" + r.Source + ")" }
	check := func(what, consequence string, value func(OSPFRouter) string) {
		var parts []string
		seen := map[string]bool{}
		for _, r := range sum.Routers {
			v := value(r)
			if v == "" {
				continue
			}
			seen[v] = true
			parts = append(parts, who(r)+" "+v)
		}
		if len(seen) > 1 {
			m := fmt.Sprintf("OSPF %s mismatch: %s; %s", what, strings.Join(parts, ", "), consequence)
			sum.Mismatches = append(sum.Mismatches, m)
			fs.add("%s", m)
		}
	}
	const noAdj = "these routers cannot become neighbours"
	check("area", noAdj, func(r OSPFRouter) string { return "area " + r.Area })
	check("hello-interval", noAdj, func(r OSPFRouter) string { return secs(r.HelloInterval) })
	check("dead-interval", noAdj, func(r OSPFRouter) string { return secs(r.DeadInterval) })
	check("network mask", noAdj+" (on a broadcast network)", func(r OSPFRouter) string { return r.NetworkMask })
	check("authentication type", noAdj, func(r OSPFRouter) string { return fmt.Sprintf("auth %d", r.AuthType) })
	check("area type (stub flag)", noAdj, func(r OSPFRouter) string {
		if r.Hellos == 0 {
			return ""
		}
		if r.Stub {
			return "stub"
		}
		return "normal"
	})
	check("MTU", "the adjacency sticks in EXSTART/EXCHANGE", func(r OSPFRouter) string {
		if r.MTU == 0 {
			return ""
		}
		return fmt.Sprintf("mtu %d", r.MTU)
	})
	ids := map[string][]string{}
	for _, r := range sum.Routers {
		ids[r.RouterID] = append(ids[r.RouterID], r.Source)
	}
	for _, r := range sum.Routers {
		if src := ids[r.RouterID]; len(src) > 1 && src[0] == r.Source {
			m := fmt.Sprintf("OSPF duplicate router id %s, used by %s", r.RouterID, strings.Join(src, " and "))
			sum.Mismatches = append(sum.Mismatches, m)
			fs.add("%s", m)
		}
	}
	if len(ids) == 1 && len(sum.Routers) == 1 && sum.Routers[0].Hellos > 1 {
		fs.add("OSPF: only %s sends hellos on this link (the other end does not run OSPF here, is passive, or its hellos are dropped)", who(sum.Routers[0]))
	}
	s.OSPF = sum
}

func secs(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%ds", n)
}

func (a *Analyzer) bgpSummary(s *Summary, fs *findings) {
	if len(a.bgpTypes) == 0 {
		return
	}
	s.BGP = &BGPSummary{Messages: a.bgpTypes, Opens: a.opens, Notifications: a.notes}
	for _, n := range a.notes {
		fs.add("BGP NOTIFICATION from %s to %s: %s (code %d/%d)", n.Src, n.Dst, n.Error, n.Code, n.Subcode)
	}
}

func (a *Analyzer) stpSummary(s *Summary, fs *findings) {
	if a.bpdus == 0 {
		return
	}
	sum := &STPSummary{BPDUs: a.bpdus, TopologyChanges: a.tcs, Bridges: []STPBridge{}, Roots: []string{}}
	roots := map[int][]string{}
	for _, k := range a.stpOrder {
		b := a.stp[k]
		if len(sum.Bridges) < maxListed {
			sum.Bridges = append(sum.Bridges, *b)
		}
		if !contains(roots[b.VLAN], b.RootID) {
			roots[b.VLAN] = append(roots[b.VLAN], b.RootID)
		}
		if !contains(sum.Roots, b.RootID) && len(sum.Roots) < maxListed {
			sum.Roots = append(sum.Roots, b.RootID)
		}
	}
	vlans := make([]int, 0, len(roots))
	for v := range roots {
		vlans = append(vlans, v)
	}
	slices.Sort(vlans)
	for _, v := range vlans {
		if r := roots[v]; len(r) > 1 {
			where := ""
			if v > 0 {
				where = fmt.Sprintf(" on VLAN %d", v)
			}
			fs.add("STP: BPDUs%s name different root bridges (%s): the tree is not converged, or the bridges do not hear each other", where, strings.Join(r, ", "))
		}
	}
	if a.tcs > 0 {
		fs.add("STP: %d topology change(s) seen (ports going up and down, or a loop being broken)", a.tcs)
	}
	s.STP = sum
}

func (a *Analyzer) cdpSummary(s *Summary, fs *findings) {
	s.CDP, s.LLDP = a.cdp, a.lldp
	var parts []string
	vlans := map[int]bool{}
	for _, n := range a.cdp {
		if n.NativeVLAN > 0 {
			vlans[n.NativeVLAN] = true
			parts = append(parts, fmt.Sprintf("%s %s native VLAN %d", n.DeviceID, n.PortID, n.NativeVLAN))
		}
	}
	if len(vlans) > 1 {
		fs.add("CDP native VLAN mismatch: %s", strings.Join(parts, ", "))
	}
}

func (a *Analyzer) tcpSummary(s *Summary, fs *findings) {
	unanswered := []TCPFlow{}
	for _, k := range a.synOrder {
		if !a.synAnswered[k] && len(unanswered) < maxListed {
			unanswered = append(unanswered, TCPFlow{Flow: k.String(), Count: a.synSeen[k]})
		}
	}
	if len(a.resets) == 0 && a.retrans == 0 && len(unanswered) == 0 {
		return
	}
	sum := &TCPSummary{Retransmissions: a.retrans, UnansweredSYN: unanswered}
	for _, k := range a.resetOrder {
		if len(sum.Resets) >= maxListed {
			break
		}
		sum.Resets = append(sum.Resets, TCPFlow{Flow: k.String(), Count: a.resets[k]})
		fs.add("TCP: %d reset(s) %s (connection refused or torn down)", a.resets[k], k)
	}
	for _, u := range unanswered {
		fs.add("TCP: %d SYN(s) %s without an answer (dropped on the path, or the host is down)", u.Count, u.Flow)
	}
	if a.retrans > 0 {
		fs.add("TCP: %d retransmission(s) (loss on the path, or a link condition)", a.retrans)
	}
	s.TCP = sum
}
