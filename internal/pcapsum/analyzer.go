package pcapsum

import (
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Defaults and bounds of Options.
const (
	DefaultMaxPackets = 500
	MaxMaxPackets     = 5000
	defaultLines      = 20
	maxLines          = 50
	defaultTop        = 10
	maxTop            = 25
	// maxTable bounds every table the analyzer keeps (conversations,
	// pending requests, flows), whatever the capture holds.
	maxTable = 4096
	// maxListed bounds the items of a list in a Summary.
	maxListed = 10
	// maxLine bounds a line of FirstPackets.
	maxLine = 160
)

// Options bound an analysis.
type Options struct {
	// MaxPackets stops the reading once the filter kept that many
	// packets (default 500, at most 5000).
	MaxPackets int
	// MaxScanned stops the reading once that many packets were read,
	// kept or not (default 50 × MaxPackets).
	MaxScanned int
	// Lines is the number of FirstPackets lines (default 20, at most 50).
	Lines int
	// Top is the number of conversations listed (default 10, at most 25).
	Top int
	// Filter keeps the packets it matches (nil: all).
	Filter *Filter
}

func (o Options) withDefaults() Options {
	if o.MaxPackets <= 0 {
		o.MaxPackets = DefaultMaxPackets
	}
	o.MaxPackets = min(o.MaxPackets, MaxMaxPackets)
	if o.MaxScanned <= 0 {
		o.MaxScanned = 50 * o.MaxPackets
	}
	if o.Lines <= 0 {
		o.Lines = defaultLines
	}
	o.Lines = min(o.Lines, maxLines)
	if o.Top <= 0 {
		o.Top = defaultTop
	}
	o.Top = min(o.Top, maxTop)
	return o
}

type convKey struct {
	src, dst string // interned below: addresses as text are few
	proto    string
}

type conv struct {
	packets int
	bytes   int64
}

type arpKey struct{ sender, target netip.Addr }

type echoKey struct {
	src, dst netip.Addr
	id, seq  uint16
}

type pairKey struct{ src, dst netip.Addr }

type icmpErrKey struct {
	from, about netip.Addr
	reason      string
}

type flowKey struct {
	src, dst     netip.Addr
	sport, dport uint16
}

func (k flowKey) String() string {
	return netip.AddrPortFrom(k.src, k.sport).String() + " > " + netip.AddrPortFrom(k.dst, k.dport).String()
}

func (k flowKey) reverse() flowKey { return flowKey{k.dst, k.src, k.dport, k.sport} }

type ospfKey struct{ routerID, src string }

type stpKey struct {
	bridge, port string
	vlan         int
}

// Analyzer sums up packets one at a time. It is not safe for concurrent
// use.
type Analyzer struct {
	o        Options
	linkType LinkType
	dec      decoder
	f        frame

	scanned, kept, malformed int
	bytes                    int64
	first, last              time.Time
	protos                   [32]int

	convs        map[convKey]*conv
	names        map[string]string // interned address texts
	arpAsks      map[arpKey]int
	arpReplied   map[netip.Addr]bool
	arpMACs      map[netip.Addr][]string
	arpReq       int
	arpRep       int
	arpGrat      int
	echoPending  map[echoKey]bool
	echoReq      int
	echoRep      int
	icmpErrs     map[icmpErrKey]int
	icmpErrOrder []icmpErrKey
	redirects    int
	ospfTypes    map[string]int
	ospf         map[ospfKey]*OSPFRouter
	ospfOrder    []ospfKey
	bgpTypes     map[string]int
	opens        []BGPOpen
	notes        []BGPNotification
	bpdus, tcs   int
	stp          map[stpKey]*STPBridge
	stpOrder     []stpKey
	cdp, lldp    []Neighbour
	resets       map[flowKey]int
	resetOrder   []flowKey
	retrans      int
	nextSeq      map[flowKey]uint32
	synSeen      map[flowKey]int
	synOrder     []flowKey
	synAnswered  map[flowKey]bool
	lines        []string
}

// New returns an analyzer of packets of linkType.
func New(linkType LinkType, o Options) *Analyzer {
	return &Analyzer{
		o: o.withDefaults(), linkType: linkType, dec: decoder{linkType: linkType},
		convs: map[convKey]*conv{}, names: map[string]string{},
		arpAsks: map[arpKey]int{}, arpReplied: map[netip.Addr]bool{}, arpMACs: map[netip.Addr][]string{},
		echoPending: map[echoKey]bool{}, icmpErrs: map[icmpErrKey]int{},
		ospfTypes: map[string]int{}, ospf: map[ospfKey]*OSPFRouter{}, bgpTypes: map[string]int{},
		stp: map[stpKey]*STPBridge{}, resets: map[flowKey]int{}, nextSeq: map[flowKey]uint32{},
		synSeen: map[flowKey]int{}, synAnswered: map[flowKey]bool{},
	}
}

// Full reports whether the analyzer has read all it may (MaxPackets kept
// or MaxScanned read), and why.
func (a *Analyzer) Full() (bool, string) {
	switch {
	case a.kept >= a.o.MaxPackets:
		return true, StopMaxPackets
	case a.scanned >= a.o.MaxScanned:
		return true, StopMaxScanned
	}
	return false, ""
}

// Add analyzes one packet; data is only read during the call. It
// reports whether the filter kept the packet.
func (a *Analyzer) Add(pi PacketInfo, data []byte) (kept bool) {
	a.scanned++
	a.f = frame{ts: pi.Timestamp, length: pi.Length}
	f := &a.f
	defer func() {
		// Every parser checks its lengths (the fuzz tests say so); should
		// one still fail on a crafted packet, that packet is malformed,
		// and the process goes on.
		if recover() != nil {
			a.malformed++
			kept = false
		}
	}()
	a.dec.decode(data, f)
	if f.protos == pOther && !f.hasMAC {
		a.malformed++
	}
	if !a.o.Filter.match(f) {
		return false
	}
	a.kept++
	a.bytes += int64(f.length)
	if a.first.IsZero() {
		a.first = f.ts
	}
	a.last = f.ts
	for i := range protoNames {
		if f.protos&protoNames[i].p != 0 {
			a.protos[i]++
		}
	}
	a.conversation(f)
	switch {
	case f.protos&pARP != 0:
		a.arpPacket(f)
	case f.protos&(pICMP|pICMP6) != 0:
		a.icmpPacket(f)
	case f.protos&pOSPF != 0:
		a.ospfPacket(f)
	case f.protos&pSTP != 0:
		a.stpPacket(f)
	case f.protos&pCDP != 0:
		if n, ok := parseCDP(f.cdp); ok && len(a.cdp) < maxListed && !hasNeighbour(a.cdp, n) {
			n.SourceMAC = macText(f)
			a.cdp = append(a.cdp, n)
		}
	case f.protos&pLLDP != 0:
		if n, ok := parseLLDP(f.lldp); ok && len(a.lldp) < maxListed && !hasNeighbour(a.lldp, n) {
			n.SourceMAC = macText(f)
			a.lldp = append(a.lldp, n)
		}
	}
	if f.protos&pTCP != 0 {
		a.tcpPacket(f)
	}
	if len(a.lines) < a.o.Lines {
		a.lines = append(a.lines, a.line(f))
	}
	return true
}

func hasNeighbour(list []Neighbour, n Neighbour) bool {
	for _, x := range list {
		if x.DeviceID == n.DeviceID && x.PortID == n.PortID {
			return true
		}
	}
	return false
}

func macText(f *frame) string {
	if !f.hasMAC {
		return ""
	}
	return net.HardwareAddr(f.srcMAC[:]).String()
}

// name returns the text of an address, interned while the table has
// room.
func (a *Analyzer) name(s string) string {
	if n, ok := a.names[s]; ok {
		return n
	}
	if len(a.names) < maxTable {
		a.names[s] = s
	}
	return s
}

// label is the most specific protocol of f.
func label(f *frame) string {
	for _, c := range []struct {
		p    proto
		name string
	}{{pOSPF, "ospf"}, {pBGP, "bgp"}, {pARP, "arp"}, {pICMP, "icmp"}, {pICMP6, "icmpv6"}, {pTCP, "tcp"}, {pUDP, "udp"},
		{pSTP, "stp"}, {pCDP, "cdp"}, {pLLDP, "lldp"}, {pIPv4, "ipv4"}, {pIPv6, "ipv6"}} {
		if f.protos&c.p != 0 {
			return c.name
		}
	}
	return "other"
}

func (a *Analyzer) ends(f *frame) (string, string) {
	switch {
	case f.src.IsValid():
		return a.name(f.src.String()), a.name(f.dst.String())
	case f.protos&pARP != 0:
		return a.name(f.arpSender.String()), a.name(f.arpTarget.String())
	case f.hasMAC:
		return a.name(net.HardwareAddr(f.srcMAC[:]).String()), a.name(net.HardwareAddr(f.dstMAC[:]).String())
	}
	return "?", "?"
}

func (a *Analyzer) conversation(f *frame) {
	src, dst := a.ends(f)
	k := convKey{src, dst, label(f)}
	c, ok := a.convs[k]
	if !ok {
		if len(a.convs) >= maxTable {
			return
		}
		c = &conv{}
		a.convs[k] = c
	}
	c.packets++
	c.bytes += int64(f.length)
}

func (a *Analyzer) arpPacket(f *frame) {
	mac := net.HardwareAddr(f.arpSenderMAC[:]).String()
	if f.arpSender.IsValid() && !f.arpSender.IsUnspecified() {
		macs := a.arpMACs[f.arpSender]
		if !contains(macs, mac) && len(macs) < 4 && (macs != nil || len(a.arpMACs) < maxTable) {
			a.arpMACs[f.arpSender] = append(macs, mac)
		}
	}
	switch f.arpOp {
	case arpRequest:
		a.arpReq++
		if f.arpSender == f.arpTarget {
			a.arpGrat++
			return
		}
		k := arpKey{f.arpSender, f.arpTarget}
		if _, ok := a.arpAsks[k]; ok || len(a.arpAsks) < maxTable {
			a.arpAsks[k]++
		}
	case arpReply:
		a.arpRep++
		if len(a.arpReplied) < maxTable {
			a.arpReplied[f.arpSender] = true
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// icmpReasons name destination-unreachable codes (RFC 792, 1812).
var icmpReasons = map[uint8]string{
	0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable", 3: "port unreachable",
	4: "fragmentation needed (MTU)", 5: "source route failed", 6: "destination network unknown", 7: "destination host unknown",
	9: "network administratively prohibited", 10: "host administratively prohibited", 13: "communication administratively prohibited (ACL)",
}

func (a *Analyzer) icmpPacket(f *frame) {
	v6 := f.protos&pICMP6 != 0
	echoReq, echoRep := uint8(8), uint8(0)
	if v6 {
		echoReq, echoRep = 128, 129
	}
	switch f.icmpType {
	case echoReq:
		a.echoReq++
		k := echoKey{f.src, f.dst, f.icmpID, f.icmpSeq}
		if len(a.echoPending) < maxTable {
			a.echoPending[k] = true
		}
	case echoRep:
		a.echoRep++
		delete(a.echoPending, echoKey{f.dst, f.src, f.icmpID, f.icmpSeq})
	}
	if v6 {
		return
	}
	var reason string
	switch f.icmpType {
	case 3:
		reason = icmpReasons[f.icmpCode]
		if reason == "" {
			reason = fmt.Sprintf("unreachable (code %d)", f.icmpCode)
		}
	case 11:
		reason = "TTL expired in transit"
		if f.icmpCode == 1 {
			reason = "fragment reassembly time exceeded"
		}
	case 5:
		a.redirects++
		return
	default:
		return
	}
	var about netip.Addr
	if in := f.icmpInner; len(in) >= 20 && in[0]>>4 == 4 {
		about = netip.AddrFrom4([4]byte(in[16:20]))
	}
	k := icmpErrKey{f.src, about, reason}
	if _, ok := a.icmpErrs[k]; !ok {
		if len(a.icmpErrs) >= maxTable {
			return
		}
		a.icmpErrOrder = append(a.icmpErrOrder, k)
	}
	a.icmpErrs[k]++
}

func (a *Analyzer) ospfPacket(f *frame) {
	h, ok := parseOSPF(f.ospf)
	if !ok {
		a.ospfTypes["other"]++
		return
	}
	name := ospfTypes[h.typ]
	if name == "" {
		name = "other"
	}
	a.ospfTypes[name]++
	k := ospfKey{h.routerID, f.src.String()}
	r, ok := a.ospf[k]
	if !ok {
		if h.typ != 1 && h.typ != 2 || len(a.ospf) >= 64 {
			return
		}
		r = &OSPFRouter{RouterID: h.routerID, Source: k.src}
		a.ospf[k] = r
		a.ospfOrder = append(a.ospfOrder, k)
	}
	r.Area, r.AuthType = h.area, int(h.auType)
	switch h.typ {
	case 1:
		if hl, ok := parseHello(h.body); ok {
			r.Hellos++
			r.HelloInterval, r.DeadInterval, r.NetworkMask, r.Priority = hl.hello, hl.dead, hl.mask, hl.priority
			r.DR, r.BDR, r.Neighbours, r.Stub = hl.dr, hl.bdr, hl.neighbours, hl.options&0x02 == 0
		}
	case 2:
		if mtu, ok := parseDBDMTU(h.body); ok {
			r.MTU = mtu
		}
	}
}

func (a *Analyzer) stpPacket(f *frame) {
	p, ok := parseBPDU(f.bpdu)
	if !ok {
		return
	}
	a.bpdus++
	if p.typ == 0x80 || p.tc {
		a.tcs++
	}
	if p.typ == 0x80 {
		return
	}
	k := stpKey{p.bridgeID, p.portID, f.vlan}
	b, ok := a.stp[k]
	if !ok {
		if len(a.stp) >= 64 {
			return
		}
		b = &STPBridge{BridgeID: p.bridgeID, PortID: p.portID, VLAN: max(f.vlan, 0)}
		a.stp[k] = b
		a.stpOrder = append(a.stpOrder, k)
	}
	b.BPDUs++
	b.RootID, b.RootCost = p.rootID, p.rootCost
	b.Protocol = map[int]string{0: "stp", 2: "rstp", 3: "mstp"}[p.version]
	if b.Protocol == "" {
		b.Protocol = fmt.Sprintf("version %d", p.version)
	}
	if f.bpduPVST {
		b.Protocol += " (pvst+)"
	}
	b.Role = p.role
	if b.Role == "" {
		b.Role = "designated"
	}
}

func (a *Analyzer) tcpPacket(f *frame) {
	k := flowKey{f.src, f.dst, f.sport, f.dport}
	if f.protos&pBGP != 0 && len(f.bgp) > 0 {
		parseBGP(f.bgp, func(m bgpMessage) { a.bgpMessage(f, m) })
	}
	switch {
	case f.tcpFlags&tcpRST != 0:
		if _, ok := a.resets[k]; !ok {
			if len(a.resets) >= maxTable {
				break
			}
			a.resetOrder = append(a.resetOrder, k)
		}
		a.resets[k]++
		if len(a.synAnswered) < maxTable {
			a.synAnswered[k.reverse()] = true
		}
	case f.tcpFlags&(tcpSYN|tcpACK) == tcpSYN:
		if _, ok := a.synSeen[k]; !ok {
			if len(a.synSeen) >= maxTable {
				break
			}
			a.synOrder = append(a.synOrder, k)
		} else {
			a.retrans++ // the SYN again
		}
		a.synSeen[k]++
	case f.tcpFlags&(tcpSYN|tcpACK) == tcpSYN|tcpACK:
		if len(a.synAnswered) < maxTable {
			a.synAnswered[k.reverse()] = true
		}
	}
	if f.tcpPayload == 0 {
		return
	}
	end := f.tcpSeq + uint32(f.tcpPayload)
	if next, ok := a.nextSeq[k]; ok {
		if int32(end-next) <= 0 {
			a.retrans++
			return
		}
	} else if len(a.nextSeq) >= maxTable {
		return
	}
	a.nextSeq[k] = end
}

func (a *Analyzer) bgpMessage(f *frame, m bgpMessage) {
	name := bgpTypes[m.typ]
	if name == "" {
		name = "other"
	}
	a.bgpTypes[name]++
	switch m.typ {
	case 1:
		if o, ok := parseOpen(m.body); ok && len(a.opens) < maxListed {
			a.opens = append(a.opens, BGPOpen{Src: f.src.String(), Dst: f.dst.String(), AS: o.as, HoldTime: o.holdTime, RouterID: o.routerID, Version: o.version})
		}
	case 3:
		if len(m.body) >= 2 && len(a.notes) < maxListed {
			a.notes = append(a.notes, BGPNotification{Src: f.src.String(), Dst: f.dst.String(), Code: int(m.body[0]), Subcode: int(m.body[1]),
				Error: bgpErrorText(m.body[0], m.body[1])})
		}
	}
}
