package pcapsum

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"

	"agentchat/internal/pcapsum/pcaptest"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// The differential tests decode packets with decoder and with oracle (the
// same reading done with gopacket's layers) and require the same frame:
// protocol bits, MACs, VLAN, addresses, ports, TTL, TCP flags, sequence
// number and payload length, ICMP type, code, id and sequence, and the
// slices handed to the OSPF, BGP, BPDU, CDP and LLDP parsers.

// serialize builds a packet with gopacket, fixing lengths and checksums.
func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

var (
	macA = net.HardwareAddr{0x0c, 0, 0, 0, 0, 1}
	macB = net.HardwareAddr{0x0c, 0, 0, 0, 0, 2}
	v4A  = net.IP{10, 0, 0, 1}
	v4B  = net.IP{10, 0, 0, 2}
	v6A  = net.ParseIP("2001:db8::1")
	v6B  = net.ParseIP("fe80::2")
)

func gpEth(et layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: et}
}

func gpIPv4(p layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: p, SrcIP: v4A, DstIP: v4B}
}

func gpIPv6(p layers.IPProtocol) *layers.IPv6 {
	return &layers.IPv6{Version: 6, HopLimit: 255, NextHeader: p, SrcIP: v6A, DstIP: v6B}
}

// diffPacket is a packet of a link type, named.
type diffPacket struct {
	name     string
	linkType LinkType
	data     []byte
}

// diffPackets are well-formed packets of every kind decoder reads, and a
// few it refuses.
func diffPackets(t testing.TB) []diffPacket {
	tcpSYN := &layers.TCP{SrcPort: 40000, DstPort: 80, Seq: 12345, SYN: true, Window: 1024,
		Options: []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{5, 0xb4}},
			{OptionType: layers.TCPOptionKindNop}, {OptionType: layers.TCPOptionKindWindowScale, OptionLength: 3, OptionData: []byte{7}},
			{OptionType: layers.TCPOptionKindSACKPermitted, OptionLength: 2}}}
	v4 := gpIPv4(layers.IPProtocolTCP)
	tcpSYN.SetNetworkLayerForChecksum(v4)
	bgp := &layers.TCP{SrcPort: 179, DstPort: 5000, Seq: 1 << 31, PSH: true, ACK: true, FIN: true, RST: true, URG: true, ECE: true, CWR: true, NS: true}
	v4bgp := gpIPv4(layers.IPProtocolTCP)
	bgp.SetNetworkLayerForChecksum(v4bgp)
	udp := &layers.UDP{SrcPort: 5353, DstPort: 53}
	v4udp := gpIPv4(layers.IPProtocolUDP)
	udp.SetNetworkLayerForChecksum(v4udp)
	v6tcp, tcp6 := gpIPv6(layers.IPProtocolTCP), &layers.TCP{SrcPort: 22, DstPort: 50000, Seq: 7, ACK: true}
	tcp6.SetNetworkLayerForChecksum(v6tcp)
	v6udp, udp6 := gpIPv6(layers.IPProtocolUDP), &layers.UDP{SrcPort: 546, DstPort: 547}
	udp6.SetNetworkLayerForChecksum(v6udp)
	v6icmp, icmp6 := gpIPv6(layers.IPProtocolICMPv6), &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoRequest, 0)}
	icmp6.SetNetworkLayerForChecksum(v6icmp)
	v6na, na := gpIPv6(layers.IPProtocolICMPv6), &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborAdvertisement, 0)}
	na.SetNetworkLayerForChecksum(v6na)
	payload := gopacket.Payload([]byte("0123456789abcdefghijklmnopqrstuvwxyz"))
	arp := func(op uint16) []byte {
		return serialize(t, gpEth(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
			HwAddressSize: 6, ProtAddressSize: 4, Operation: op, SourceHwAddress: macA, SourceProtAddress: v4A,
			DstHwAddress: make([]byte, 6), DstProtAddress: v4B})
	}
	v4opt := gpIPv4(layers.IPProtocolUDP)
	v4opt.Options = []layers.IPv4Option{{OptionType: 148, OptionLength: 4, OptionData: []byte{0, 0}}, {OptionType: 1}, {OptionType: 0}}
	udpOpt := &layers.UDP{SrcPort: 1, DstPort: 2}
	udpOpt.SetNetworkLayerForChecksum(v4opt)
	frag := gpIPv4(layers.IPProtocolUDP)
	frag.FragOffset, frag.Flags = 100, layers.IPv4MoreFragments
	icmpEcho := serialize(t, gpEth(layers.EthernetTypeIPv4), gpIPv4(layers.IPProtocolICMPv4),
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoRequest, 0), Id: 7, Seq: 9}, payload)
	icmpUnreach := serialize(t, gpEth(layers.EthernetTypeIPv4), gpIPv4(layers.IPProtocolICMPv4),
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeDestinationUnreachable, 3)}, gopacket.Payload(icmpEcho[14:42]))
	echo6 := serialize(t, gpEth(layers.EthernetTypeIPv6), v6icmp, icmp6, &layers.ICMPv6Echo{Identifier: 0x1234, SeqNumber: 0x5678}, payload)
	tcpv4 := serialize(t, gpEth(layers.EthernetTypeIPv4), v4, tcpSYN)
	bgpv4 := serialize(t, gpEth(layers.EthernetTypeIPv4), v4bgp, bgp, payload)
	tcpv6 := serialize(t, gpEth(layers.EthernetTypeIPv6), v6tcp, tcp6, payload)

	ps := []diffPacket{
		{"tcp syn options", LinkTypeEthernet, tcpv4},
		{"tcp bgp all flags", LinkTypeEthernet, bgpv4},
		{"udp", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeIPv4), v4udp, udp, payload)},
		{"udp ipv4 options", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeIPv4), v4opt, udpOpt, payload)},
		{"ipv4 later fragment", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeIPv4), frag, payload)},
		{"icmp echo", LinkTypeEthernet, icmpEcho},
		{"icmp unreachable", LinkTypeEthernet, icmpUnreach},
		{"tcp ipv6", LinkTypeEthernet, tcpv6},
		{"udp ipv6", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeIPv6), v6udp, udp6, payload)},
		{"icmpv6 echo", LinkTypeEthernet, echo6},
		{"icmpv6 neighbour advertisement", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeIPv6), v6na, na, payload)},
		{"ipv6 hop-by-hop", LinkTypeEthernet, withHopByHop(echo6, []byte{5, 2, 0, 0, 1, 0}, false)},
		{"ipv6 jumbo", LinkTypeEthernet, withHopByHop(echo6, []byte{0xc2, 4, 0, 1, 0, 0}, true)},
		{"arp request", LinkTypeEthernet, arp(1)},
		{"arp reply", LinkTypeEthernet, arp(2)},
		{"vlan", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeDot1Q),
			&layers.Dot1Q{VLANIdentifier: 10, Priority: 5, Type: layers.EthernetTypeIPv4}, v4udp, udp, payload)},
		{"qinq", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeQinQ), &layers.Dot1Q{VLANIdentifier: 100, Type: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{VLANIdentifier: 20, Type: layers.EthernetTypeIPv4}, v4, tcpSYN)},
		{"three tags", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 1, Type: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{VLANIdentifier: 2, Type: layers.EthernetTypeDot1Q}, &layers.Dot1Q{VLANIdentifier: 3, Type: layers.EthernetTypeIPv4}, v4udp, udp)},
		{"vlan llc", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 30, Type: 0x0026},
			&layers.LLC{DSAP: 0x42, SSAP: 0x42, Control: 3}, payload)},
		{"stp", LinkTypeEthernet, pcaptest.STPConfig(macA, 1, macA, 0, 1, 1, 2)},
		{"cdp", LinkTypeEthernet, pcaptest.CDP(macA, "SW1", "Gi0/1", "cisco", 1)},
		{"lldp", LinkTypeEthernet, pcaptest.LLDP(macA, "e1", "host")},
		{"ospf", LinkTypeEthernet, pcaptest.OSPFHello(macA, "10.0.0.1", "1.1.1.1", "0.0.0.0", "255.255.255.0", 10, 40)},
		{"snap other", LinkTypeEthernet, serialize(t, gpEth(layers.EthernetTypeLLC), &layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
			&layers.SNAP{OrganizationalCode: []byte{0, 0, 0x0c}, Type: 0x2004}, payload)},
		{"ethertype unknown", LinkTypeEthernet, serialize(t, gpEth(0x88b5), payload)},
		{"runt", LinkTypeEthernet, tcpv4[:13]},
		{"empty", LinkTypeEthernet, nil},
		{"c_hdlc ipv4", LinkTypeCHDLC, append([]byte{0x0f, 0, 0x08, 0}, tcpv4[14:]...)},
		{"c_hdlc cdp", LinkTypeCHDLC, append([]byte{0x8f, 0, 0x20, 0}, payload...)},
		{"ppp ipv4", LinkTypePPP, append([]byte{0xff, 0x03, 0, 0x21}, icmpEcho[14:]...)},
		{"ppp_hdlc ipv6", LinkTypePPPHDLC, append([]byte{0, 0x57}, tcpv6[14:]...)},
		{"ppp lcp", LinkTypePPP, append([]byte{0xff, 0x03, 0xc0, 0x21}, payload...)},
		{"raw ipv4", LinkTypeRaw, bgpv4[14:]},
		{"raw ipv6", LinkTypeIPv4, echo6[14:]},
		{"null", 0, tcpv4},
	}
	// Edge cases of the headers' checks, both sides of each.
	byName := func(name string) []byte {
		for _, p := range ps {
			if p.name == name {
				return p.data
			}
		}
		t.Fatalf("no packet %q", name)
		return nil
	}
	ipv4Opts, udpv4, stp, vlan, arpReq := byName("udp ipv4 options"), byName("udp"), byName("stp"), byName("vlan"), byName("arp request")
	edit := func(p []byte, size int, f func(b []byte)) []byte {
		b := make([]byte, max(size, len(p)))
		copy(b, p)
		f(b)
		return b
	}
	u16 := func(off int, v uint16) func([]byte) { return func(b []byte) { binary.BigEndian.PutUint16(b[off:], v) } }
	hbhEnd := withHopByHop(echo6, []byte{5, 2, 0, 0, 1, 0}, false)[:14+40+8]
	binary.BigEndian.PutUint16(hbhEnd[14+4:], 8)
	for _, e := range []struct {
		name string
		base []byte
		size int
		f    func([]byte)
	}{
		{"ipv4 option length 2", ipv4Opts, 0, func(b []byte) { b[14+21] = 2 }},
		{"ipv4 option length 3", ipv4Opts, 0, func(b []byte) { b[14+21] = 3 }},
		{"ipv4 option past header", ipv4Opts, 0, func(b []byte) { b[14+21] = 9 }},
		{"ipv4 option length missing", ipv4Opts, 0, func(b []byte) { b[14+20], b[14+21], b[14+22], b[14+23] = 1, 1, 1, 7 }},
		{"ipv4 length 0", tcpv4, 0, u16(14+2, 0)},
		{"ipv4 length 0 past 64k", tcpv4, 70000, u16(14+2, 0)},
		{"ipv4 length 0 wraps below 20", tcpv4, 65536 + 14 + 10, u16(14+2, 0)},
		{"ipv4 length 19", tcpv4, 0, u16(14+2, 19)},
		{"ipv4 length 20", tcpv4, 0, u16(14+2, 20)},
		{"ipv4 length past data", tcpv4, 0, u16(14+2, 1000)},
		{"ipv4 ihl 4", tcpv4, 0, func(b []byte) { b[14] = 0x44 }},
		{"ipv4 ihl past length", tcpv4, 0, func(b []byte) { b[14], b[14+2], b[14+3] = 0x4f, 0, 40 }},
		{"ipv4 ihl past data", tcpv4[:14+30], 0, func(b []byte) { b[14] = 0x4f; binary.BigEndian.PutUint16(b[14+2:], 100) }},
		{"ipv4 version 5", tcpv4, 0, func(b []byte) { b[14] = 0x55 }},
		{"tcp offset 4", tcpv4, 0, func(b []byte) { b[14+20+12] = 0x40 }},
		{"tcp offset past data", tcpv4, 0, func(b []byte) { b[14+20+12] = 0xf0 }},
		{"tcp option length 1", tcpv4, 0, func(b []byte) { b[14+20+21] = 1 }},
		{"tcp option length past header", tcpv4, 0, func(b []byte) { b[14+20+21] = 13 }},
		{"tcp option end", tcpv4, 0, func(b []byte) { b[14+20+20] = 0; b[14+20+21] = 0xff }},
		{"tcp short", tcpv4[:14+20+19], 0, u16(14+2, 39)},
		{"udp length 7", udpv4, 0, u16(14+20+4, 7)},
		{"udp length 0", udpv4, 0, u16(14+20+4, 0)},
		{"udp length past data", udpv4, 0, u16(14+20+4, 5000)},
		{"icmp short", icmpEcho[:14+20+7], 0, u16(14+2, 27)},
		{"ipv6 length 0", tcpv6, 0, u16(14+4, 0)},
		{"ipv6 length past data", tcpv6, 0, u16(14+4, 9000)},
		{"ipv6 length short", tcpv6, 0, u16(14+4, 21)},
		{"ipv6 short", tcpv6[:14+39], 0, func([]byte) {}},
		{"icmpv6 short", echo6[:14+40+3], 0, func([]byte) {}},
		{"icmpv6 echo short", echo6[:14+40+7], 0, func([]byte) {}},
		{"hop-by-hop without jumbo, length 0", withHopByHop(echo6, []byte{5, 2, 0, 0, 1, 0}, true), 0, func([]byte) {}},
		{"jumbo with a length", withHopByHop(echo6, []byte{0xc2, 4, 0, 1, 0, 0}, false), 0, func([]byte) {}},
		{"jumbo too small", withHopByHop(echo6, []byte{0xc2, 4, 0, 0, 0xff, 0xff}, true), 0, func([]byte) {}},
		{"jumbo of 3 bytes", withHopByHop(echo6, []byte{0xc2, 3, 0, 1, 0, 0}, true), 0, func([]byte) {}},
		{"second jumbo ignored", withHopByHop(echo6, []byte{0xc2, 4, 0, 1, 0, 0, 0xc2, 0, 0}, true), 0, func([]byte) {}},
		{"hop-by-hop option past header", withHopByHop(echo6, []byte{5, 8, 0, 0, 0, 0}, false), 0, func([]byte) {}},
		{"hop-by-hop option past data", withHopByHop(echo6, []byte{5, 200, 0, 0, 0, 0}, false), 0, func([]byte) {}},
		{"hop-by-hop pad1 at the end", hbhEnd, 0, func(b []byte) { b[len(b)-1] = 0 }},
		{"hop-by-hop length past data", hbhEnd, 0, func(b []byte) { b[14+41] = 3 }},
		{"802.3 length short", stp, 0, u16(12, 10)},
		{"802.3 length long", stp, 0, u16(12, 0x05ff)},
		{"802.3 length 0", stp, 0, u16(12, 0)},
		{"ethertype 0x0600", stp, 0, u16(12, 0x0600)},
		{"vlan tag short", vlan[:16], 0, func([]byte) {}},
		{"vlan tag only", vlan[:18], 0, func([]byte) {}},
		{"arp not ethernet", arpReq, 0, u16(14, 6)},
		{"arp short", arpReq[:14+27], 0, func([]byte) {}},
	} {
		ps = append(ps, diffPacket{e.name, LinkTypeEthernet, edit(e.base, e.size, e.f)})
	}
	return ps
}

// withHopByHop inserts a hop-by-hop header of opts (padded to 8 bytes)
// after the IPv6 header of the Ethernet frame p; jumbo sets the payload
// length to 0.
func withHopByHop(p, opts []byte, jumbo bool) []byte {
	h := append([]byte{p[14+6], 0}, opts...)
	for len(h)%8 != 0 {
		h = append(h, 0)
	}
	h[1] = byte(len(h)/8 - 1)
	out := append(append(append([]byte(nil), p[:14+40]...), h...), p[14+40:]...)
	out[14+6] = 0
	plen := binary.BigEndian.Uint16(out[14+4:]) + uint16(len(h))
	if jumbo {
		plen = 0
	}
	binary.BigEndian.PutUint16(out[14+4:], plen)
	return out
}

// decodeBoth decodes data with decoder and oracle. oracleOK is false when
// gopacket panicked (then only decoder's not panicking is checked).
func decodeBoth(lt LinkType, data []byte) (got, want string, oracleOK bool) {
	var f frame
	d := decoder{linkType: lt}
	d.decode(data, &f)
	got = fmt.Sprintf("%+v", f)
	defer func() {
		if recover() != nil {
			oracleOK = false
		}
	}()
	var g frame
	o := oracle{linkType: layers.LinkType(lt)}
	o.decode(data, &g)
	return got, fmt.Sprintf("%+v", g), true
}

func TestDecodeMatchesGopacket(t *testing.T) {
	for _, p := range diffPackets(t) {
		t.Run(p.name, func(t *testing.T) {
			got, want, ok := decodeBoth(p.linkType, p.data)
			if !ok {
				t.Fatal("gopacket panicked on a well-formed packet")
			}
			if got != want {
				t.Errorf("decoder %s\ngopacket %s", got, want)
			}
		})
	}
}

// TestDecodeFrames checks a few frames field by field, so that both
// decoders agreeing on a wrong reading would show.
func TestDecodeFrames(t *testing.T) {
	ps := map[string]diffPacket{}
	for _, p := range diffPackets(t) {
		ps[p.name] = p
	}
	for _, tt := range []struct {
		name  string
		check func(f *frame) bool
	}{
		{"tcp syn options", func(f *frame) bool {
			return f.protos == pIPv4|pTCP && f.sport == 40000 && f.dport == 80 && f.tcpSeq == 12345 && f.tcpFlags == tcpSYN && f.tcpPayload == 0 && f.ttl == 64 &&
				f.src.String() == "10.0.0.1" && f.dst.String() == "10.0.0.2" && f.srcMAC == [6]byte(macA) && f.dstMAC == [6]byte(macB) && f.vlan == -1
		}},
		{"tcp bgp all flags", func(f *frame) bool {
			return f.protos == pIPv4|pTCP|pBGP && f.tcpFlags == tcpFIN|tcpSYN|tcpRST|tcpPSH|tcpACK-tcpSYN && f.tcpPayload == 36 && len(f.bgp) == 36
		}},
		{"qinq", func(f *frame) bool { return f.protos == pVLAN|pIPv4|pTCP && f.vlan == 100 }},
		{"vlan llc", func(f *frame) bool { return f.protos == pVLAN|pSTP && f.vlan == 30 }},
		{"three tags", func(f *frame) bool { return f.protos == pVLAN|pOther && f.vlan == 1 }},
		{"icmpv6 echo", func(f *frame) bool {
			return f.protos == pIPv6|pICMP6 && f.icmpType == 128 && f.icmpID == 0x1234 && f.icmpSeq == 0x5678 && f.ttl == 255 && f.src.String() == "2001:db8::1"
		}},
		{"ipv6 hop-by-hop", func(f *frame) bool { return f.protos == pIPv6 }},
		{"ipv4 later fragment", func(f *frame) bool { return f.protos == pIPv4 }},
		{"icmp unreachable", func(f *frame) bool {
			return f.protos == pIPv4|pICMP && f.icmpType == 3 && f.icmpCode == 3 && len(f.icmpInner) == 28
		}},
		{"arp reply", func(f *frame) bool {
			return f.protos == pARP && f.arpOp == arpReply && f.arpSender.String() == "10.0.0.1" && f.arpTarget.String() == "10.0.0.2" && f.arpSenderMAC == [6]byte(macA)
		}},
		{"c_hdlc ipv4", func(f *frame) bool { return f.protos == pIPv4|pTCP && !f.hasMAC }},
		{"raw ipv6", func(f *frame) bool { return f.protos == pIPv6|pICMP6 }},
		{"runt", func(f *frame) bool { return f.protos == pOther && !f.hasMAC }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := ps[tt.name]
			if !ok {
				t.Fatal("no such packet")
			}
			var f frame
			d := decoder{linkType: p.linkType}
			d.decode(p.data, &f)
			if !tt.check(&f) {
				t.Errorf("%+v", f)
			}
		})
	}
}

// mutate changes p the ways a crafted or damaged packet differs from a
// good one: random bytes, header fields set to edge values, truncation,
// trailing bytes.
func mutate(rng *rand.Rand, p []byte) []byte {
	p = append([]byte(nil), p...)
	edges := []uint16{0, 1, 2, 4, 5, 7, 8, 19, 20, 21, 39, 40, 0x45, 0x4f, 0x5f, 0x0600, 0x05ff, 0x8100, 0x88a8, 0x0800, 0x86dd, 0x0806, 0xc204, 0xffff}
	for range 1 + rng.IntN(4) {
		if len(p) == 0 {
			break
		}
		switch rng.IntN(5) {
		case 0: // any byte
			p[rng.IntN(len(p))] = byte(rng.UintN(256))
		case 1: // a header byte
			p[rng.IntN(min(len(p), 80))] = byte(rng.UintN(256))
		case 2: // a header field set to an edge value
			if i := rng.IntN(min(len(p), 80)); i+2 <= len(p) {
				binary.BigEndian.PutUint16(p[i:], edges[rng.IntN(len(edges))])
			}
		case 3: // cut short
			p = p[:rng.IntN(len(p)+1)]
		default: // trailing bytes
			for range rng.IntN(40) {
				p = append(p, byte(rng.UintN(256)))
			}
		}
	}
	return p
}

func TestDecodeMatchesGopacketMutated(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 12))
	ps := diffPackets(t)
	n := 200000
	if testing.Short() {
		n = 20000
	}
	linkTypes := []LinkType{LinkTypeEthernet, LinkTypeCHDLC, LinkTypePPP, LinkTypePPPHDLC, LinkTypeRaw, LinkTypeIPv4}
	decoded, panics := 0, 0
	for i := range n {
		p := ps[rng.IntN(len(ps))]
		lt, data := p.linkType, mutate(rng, p.data)
		switch {
		case i%10 == 0: // random bytes
			data = make([]byte, rng.IntN(120))
			for j := range data {
				data[j] = byte(rng.UintN(256))
			}
			fallthrough
		case i%10 == 1: // another link type
			lt = linkTypes[rng.IntN(len(linkTypes))]
		}
		got, want, ok := decodeBoth(lt, data)
		if !ok {
			panics++
			continue
		}
		if got != want {
			t.Fatalf("%s mutated to %x (link type %d):\ndecoder  %s\ngopacket %s", p.name, data, lt, got, want)
		}
		var f frame
		(&decoder{linkType: lt}).decode(data, &f)
		if f.protos&(pTCP|pUDP|pICMP|pICMP6|pARP) != 0 {
			decoded++
		}
	}
	t.Logf("%d packets, %d read up to the transport or ARP, %d panicked in gopacket", n, decoded, panics)
	if decoded < n/10 {
		t.Errorf("only %d of %d mutated packets were read up to the transport: the mutations are too coarse", decoded, n)
	}
}

// FuzzDecode: decoder never panics and reads every packet as gopacket
// does.
func FuzzDecode(f *testing.F) {
	linkTypes := []LinkType{LinkTypeEthernet, LinkTypeCHDLC, LinkTypePPP, LinkTypePPPHDLC, LinkTypeRaw, LinkTypeIPv4}
	for _, p := range diffPackets(f) {
		for i, lt := range linkTypes {
			if lt == p.linkType {
				f.Add(uint8(i), p.data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		got, want, ok := decodeBoth(linkTypes[int(lt)%len(linkTypes)], data)
		if ok && got != want {
			t.Errorf("decoder  %s\ngopacket %s", got, want)
		}
	})
}
