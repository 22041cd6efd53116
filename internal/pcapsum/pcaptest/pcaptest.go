// Package pcaptest builds real pcap captures for tests: packets
// serialized with gopacket (Ethernet, ARP, IPv4, ICMP, TCP, UDP) or
// written byte by byte where gopacket cannot serialize them (OSPFv2 per
// RFC 2328 A.3, BGP per RFC 4271 4, BPDUs, CDP, LLDP), in a pcap stream
// written with pcapgo.Writer.
package pcaptest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// Start is the time of the first packet of a Capture.
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Capture is a pcap stream being written, one packet every 10 ms from
// Start.
type Capture struct {
	buf bytes.Buffer
	w   *pcapgo.Writer
	n   int
}

// New starts an Ethernet capture.
func New() *Capture {
	c := &Capture{}
	c.w = pcapgo.NewWriter(&c.buf)
	if err := c.w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		panic(err)
	}
	return c
}

// Add writes one packet.
func (c *Capture) Add(pkt []byte) *Capture {
	ci := gopacket.CaptureInfo{Timestamp: Start.Add(time.Duration(c.n) * 10 * time.Millisecond), CaptureLength: len(pkt), Length: len(pkt)}
	c.n++
	if err := c.w.WritePacket(ci, pkt); err != nil {
		panic(err)
	}
	return c
}

// Bytes returns the pcap stream.
func (c *Capture) Bytes() []byte { return c.buf.Bytes() }

// Reader returns a reader of the pcap stream.
func (c *Capture) Reader() io.Reader { return bytes.NewReader(c.buf.Bytes()) }

// MAC returns the MAC 0c:00:00:00:00:n.
func MAC(n byte) net.HardwareAddr { return net.HardwareAddr{0x0c, 0, 0, 0, 0, n} }

// Broadcast is the Ethernet broadcast address.
var Broadcast = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func ip(s string) net.IP { return net.IP(netip.MustParseAddr(s).AsSlice()) }

// ARP returns an ARP request (reply false: who-has target tell sender)
// or reply (sender is-at its MAC, to target).
func ARP(reply bool, senderMAC net.HardwareAddr, sender, target string, targetMAC net.HardwareAddr) []byte {
	op, dst := uint16(layers.ARPRequest), Broadcast
	tmac := net.HardwareAddr{0, 0, 0, 0, 0, 0}
	if reply {
		op, dst, tmac = layers.ARPReply, targetMAC, targetMAC
	}
	return serialize(
		&layers.Ethernet{SrcMAC: senderMAC, DstMAC: dst, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: op, SourceHwAddress: senderMAC, SourceProtAddress: ip(sender).To4(), DstHwAddress: tmac, DstProtAddress: ip(target).To4()},
	)
}

func ipv4(srcMAC, dstMAC net.HardwareAddr, src, dst string, p layers.IPProtocol, ttl uint8) (*layers.Ethernet, *layers.IPv4) {
	return &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, IHL: 5, TTL: ttl, Protocol: p, SrcIP: ip(src).To4(), DstIP: ip(dst).To4()}
}

// ICMPEcho returns an ICMP echo request (reply false) or reply.
func ICMPEcho(reply bool, srcMAC, dstMAC net.HardwareAddr, src, dst string, id, seq uint16) []byte {
	t := uint8(layers.ICMPv4TypeEchoRequest)
	if reply {
		t = layers.ICMPv4TypeEchoReply
	}
	eth, ip4 := ipv4(srcMAC, dstMAC, src, dst, layers.IPProtocolICMPv4, 64)
	return serialize(eth, ip4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(t, 0), Id: id, Seq: seq}, gopacket.Payload(make([]byte, 56)))
}

// ICMPUnreachable returns a destination-unreachable of code from router
// to src, about a packet src sent to dst.
func ICMPUnreachable(srcMAC, dstMAC net.HardwareAddr, router, src, dst string, code uint8) []byte {
	inner := serialize(&layers.IPv4{Version: 4, IHL: 5, TTL: 63, Protocol: layers.IPProtocolUDP, SrcIP: ip(src).To4(), DstIP: ip(dst).To4()},
		gopacket.Payload(make([]byte, 8)))
	eth, ip4 := ipv4(srcMAC, dstMAC, router, src, layers.IPProtocolICMPv4, 255)
	return serialize(eth, ip4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeDestinationUnreachable, code)}, gopacket.Payload(inner))
}

// TCP flags of TCP.
const (
	SYN = 1 << iota
	ACK
	RST
	PSH
	FIN
)

// TCP returns a TCP segment with flags and payload.
func TCP(srcMAC, dstMAC net.HardwareAddr, src string, sport uint16, dst string, dport uint16, seq uint32, flags int, payload []byte) []byte {
	eth, ip4 := ipv4(srcMAC, dstMAC, src, dst, layers.IPProtocolTCP, 64)
	t := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq, Window: 65535,
		SYN: flags&SYN != 0, ACK: flags&ACK != 0, RST: flags&RST != 0, PSH: flags&PSH != 0, FIN: flags&FIN != 0}
	if err := t.SetNetworkLayerForChecksum(ip4); err != nil {
		panic(err)
	}
	return serialize(eth, ip4, t, gopacket.Payload(payload))
}

// UDP returns a UDP datagram of n payload bytes.
func UDP(srcMAC, dstMAC net.HardwareAddr, src string, sport uint16, dst string, dport uint16, n int) []byte {
	eth, ip4 := ipv4(srcMAC, dstMAC, src, dst, layers.IPProtocolUDP, 64)
	u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	if err := u.SetNetworkLayerForChecksum(ip4); err != nil {
		panic(err)
	}
	return serialize(eth, ip4, u, gopacket.Payload(make([]byte, n)))
}

// checksum is the Internet checksum (RFC 1071).
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// ospf wraps an OSPFv2 body in its header (RFC 2328 A.3.1: version 2,
// type, length, router id, area, checksum over the packet but the
// authentication field, AuType 0) and an IPv4 packet to 224.0.0.5.
func ospf(srcMAC net.HardwareAddr, src string, typ byte, routerID, area string, body []byte) []byte {
	p := make([]byte, 24+len(body))
	p[0], p[1] = 2, typ
	binary.BigEndian.PutUint16(p[2:4], uint16(len(p)))
	copy(p[4:8], ip(routerID).To4())
	copy(p[8:12], ip(area).To4())
	copy(p[24:], body)
	sum := checksum(append(append([]byte(nil), p[:16]...), p[24:]...))
	binary.BigEndian.PutUint16(p[12:14], sum)
	eth, ip4 := ipv4(srcMAC, net.HardwareAddr{0x01, 0x00, 0x5e, 0, 0, 5}, src, "224.0.0.5", 89, 1)
	ip4.TOS = 0xc0
	return serialize(eth, ip4, gopacket.Payload(p))
}

// OSPFHello returns an OSPFv2 Hello (RFC 2328 A.3.2: network mask, hello
// interval, options with the E bit, priority 1, dead interval, DR and
// BDR 0.0.0.0, then the neighbours seen).
func OSPFHello(srcMAC net.HardwareAddr, src, routerID, area, mask string, hello uint16, dead uint32, neighbours ...string) []byte {
	b := make([]byte, 20, 20+4*len(neighbours))
	copy(b[0:4], ip(mask).To4())
	binary.BigEndian.PutUint16(b[4:6], hello)
	b[6], b[7] = 0x02, 1
	binary.BigEndian.PutUint32(b[8:12], dead)
	for _, n := range neighbours {
		b = append(b, ip(n).To4()...)
	}
	return ospf(srcMAC, src, 1, routerID, area, b)
}

// OSPFDBD returns an OSPFv2 Database Description with no LSA header
// (RFC 2328 A.3.3: interface MTU, options, flags I/M/MS, sequence).
func OSPFDBD(srcMAC net.HardwareAddr, src, routerID, area string, mtu uint16) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint16(b[0:2], mtu)
	b[2], b[3] = 0x02, 0x07
	binary.BigEndian.PutUint32(b[4:8], 4242)
	return ospf(srcMAC, src, 2, routerID, area, b)
}

func bgp(typ byte, body []byte) []byte {
	m := bytes.Repeat([]byte{0xff}, 16)
	m = binary.BigEndian.AppendUint16(m, uint16(19+len(body)))
	m = append(m, typ)
	return append(m, body...)
}

// BGPOpen returns a BGP OPEN message (version 4, AS, hold time, BGP id,
// no optional parameters).
func BGPOpen(as, hold uint16, routerID string) []byte {
	b := []byte{4}
	b = binary.BigEndian.AppendUint16(b, as)
	b = binary.BigEndian.AppendUint16(b, hold)
	b = append(b, ip(routerID).To4()...)
	return bgp(1, append(b, 0))
}

// BGPNotification returns a BGP NOTIFICATION message.
func BGPNotification(code, subcode byte) []byte { return bgp(3, []byte{code, subcode}) }

// llc returns an 802.3 frame with an LLC header and payload.
func llc(srcMAC, dstMAC net.HardwareAddr, hdr, payload []byte) []byte {
	b := append(append([]byte{}, dstMAC...), srcMAC...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(hdr)+len(payload)))
	return append(append(b, hdr...), payload...)
}

// STPConfig returns an IEEE 802.1D configuration BPDU (RSTP when role is
// not "": 1 alternate, 2 root, 3 designated) to 01:80:c2:00:00:00.
func STPConfig(srcMAC net.HardwareAddr, rootPrio uint16, rootMAC net.HardwareAddr, cost uint32, bridgePrio uint16, port uint16, role byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	if role != 0 {
		b[2], b[3], b[4] = 2, 2, role<<2|0x30
	}
	b = binary.BigEndian.AppendUint16(b, rootPrio)
	b = append(b, rootMAC...)
	b = binary.BigEndian.AppendUint32(b, cost)
	b = binary.BigEndian.AppendUint16(b, bridgePrio)
	b = append(b, srcMAC...)
	b = binary.BigEndian.AppendUint16(b, 0x8000|port)
	b = append(b, 0, 0, 0x14, 0, 0x02, 0, 0x0f, 0)
	if role != 0 {
		b = append(b, 0)
	}
	return llc(srcMAC, net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0}, []byte{0x42, 0x42, 0x03}, b)
}

// CDP returns a CDPv2 advertisement (device id, port id, platform,
// native VLAN) to 01:00:0c:cc:cc:cc.
func CDP(srcMAC net.HardwareAddr, device, port, platform string, nativeVLAN uint16) []byte {
	b := []byte{2, 180, 0, 0}
	tlv := func(t uint16, v []byte) {
		b = binary.BigEndian.AppendUint16(b, t)
		b = binary.BigEndian.AppendUint16(b, uint16(4+len(v)))
		b = append(b, v...)
	}
	tlv(1, []byte(device))
	tlv(3, []byte(port))
	tlv(6, []byte(platform))
	tlv(10, binary.BigEndian.AppendUint16(nil, nativeVLAN))
	return llc(srcMAC, net.HardwareAddr{0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc}, []byte{0xaa, 0xaa, 0x03, 0, 0, 0x0c, 0x20, 0x00}, b)
}

// LLDP returns an LLDPDU (chassis MAC, port name, TTL, system name).
func LLDP(srcMAC net.HardwareAddr, port, system string) []byte {
	var b []byte
	tlv := func(t int, v []byte) {
		b = binary.BigEndian.AppendUint16(b, uint16(t<<9|len(v)))
		b = append(b, v...)
	}
	tlv(1, append([]byte{4}, srcMAC...))
	tlv(2, append([]byte{5}, port...))
	tlv(3, []byte{0, 120})
	tlv(5, []byte(system))
	tlv(0, nil)
	return serialize(&layers.Ethernet{SrcMAC: srcMAC, DstMAC: net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, EthernetType: 0x88cc}, gopacket.Payload(b))
}
