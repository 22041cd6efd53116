package pcapsum

import (
	"encoding/binary"
	"net/netip"
	"time"
)

// proto is a set of protocols found in a packet.
type proto uint32

// Protocols of a packet.
const (
	pARP proto = 1 << iota
	pIPv4
	pIPv6
	pICMP
	pICMP6
	pTCP
	pUDP
	pOSPF
	pBGP
	pSTP
	pCDP
	pLLDP
	pVLAN
	pOther
)

// protoNames name the bits of proto in the summary's counts, in order.
var protoNames = []struct {
	p    proto
	name string
}{
	{pVLAN, "vlan"}, {pARP, "arp"}, {pIPv4, "ipv4"}, {pIPv6, "ipv6"}, {pICMP, "icmp"}, {pICMP6, "icmpv6"},
	{pTCP, "tcp"}, {pUDP, "udp"}, {pOSPF, "ospf"}, {pBGP, "bgp"}, {pSTP, "stp"}, {pCDP, "cdp"},
	{pLLDP, "lldp"}, {pOther, "other"},
}

// Well-known values.
const (
	etherIPv4  = 0x0800
	etherARP   = 0x0806
	etherDot1Q = 0x8100
	etherQinQ  = 0x88a8
	etherIPv6  = 0x86dd
	etherLLDP  = 0x88cc
	// etherLLC stands for an 802.3 length field (below 0x0600): an 802.2
	// LLC header follows.
	etherLLC     = 0
	ipProtoTCP   = 6
	ipProtoUDP   = 17
	ipProtoICMP  = 1
	ipProto6HBH  = 0
	ipProtoICMP6 = 58
	ipProtoOSPF  = 89
	portBGP      = 179
	snapCDP      = 0x2000
	snapPVST     = 0x010b
)

// ARP operations.
const (
	arpRequest = 1
	arpReply   = 2
)

// ciscoOUI is the SNAP organisation code of CDP and PVST+.
var ciscoOUI = [3]byte{0x00, 0x00, 0x0c}

// frame is one decoded packet. Its slices point into the packet's data,
// valid only while the packet is being analyzed.
type frame struct {
	ts     time.Time
	length int // on the wire
	protos proto
	srcMAC [6]byte
	dstMAC [6]byte
	hasMAC bool
	vlan   int // -1: untagged
	// IP (v4 or v6) addresses and TCP/UDP ports.
	src, dst     netip.Addr
	sport, dport uint16
	ttl          uint8
	// ARP.
	arpOp                uint16
	arpSender, arpTarget netip.Addr
	arpSenderMAC         [6]byte
	icmpType, icmpCode   uint8
	icmpID, icmpSeq      uint16
	icmpInner            []byte // the quoted IP header of an ICMP error
	tcpFlags             uint8  // FIN 1, SYN 2, RST 4, PSH 8, ACK 16
	tcpSeq               uint32
	tcpPayload           int
	ospf, bgp, bpdu, cdp []byte
	lldp                 []byte
	bpduPVST             bool
}

// TCP flag bits of frame.tcpFlags.
const (
	tcpFIN = 1 << iota
	tcpSYN
	tcpRST
	tcpPSH
	tcpACK
)

// decoder decodes packets of one link type into frames. Every parser
// checks a length before it reads, reads only what it was given, and
// keeps no state: a packet it cannot read is "other", never a panic.
type decoder struct {
	linkType LinkType
}

// decode fills f from data, as far as it can read it; what it cannot
// read is "other".
func (d *decoder) decode(data []byte, f *frame) {
	f.vlan = -1
	switch d.linkType {
	case LinkTypeEthernet:
		ethernet(data, f)
	case LinkTypeCHDLC: // address, control, protocol
		if len(data) < 4 {
			f.protos |= pOther
			return
		}
		et := binary.BigEndian.Uint16(data[2:4])
		if et == snapCDP {
			f.protos |= pCDP
			f.cdp = data[4:]
			return
		}
		network(et, data[4:], f)
	case LinkTypePPP, LinkTypePPPHDLC: // PPP in HDLC-like framing (DLT_PPP_SERIAL): ff 03 protocol
		if len(data) >= 2 && data[0] == 0xff && data[1] == 0x03 {
			data = data[2:]
		}
		if len(data) < 2 {
			f.protos |= pOther
			return
		}
		switch binary.BigEndian.Uint16(data[:2]) {
		case 0x0021:
			network(etherIPv4, data[2:], f)
		case 0x0057:
			network(etherIPv6, data[2:], f)
		default:
			f.protos |= pOther
		}
	case LinkTypeRaw, LinkTypeIPv4: // raw IPv4 or IPv6
		if len(data) > 0 && data[0]>>4 == 6 {
			network(etherIPv6, data, f)
		} else {
			network(etherIPv4, data, f)
		}
	default:
		f.protos |= pOther
	}
}

// ethernet reads an Ethernet II or 802.3 header (destination, source,
// type or length) and up to two 802.1Q or 802.1ad tags.
func ethernet(data []byte, f *frame) {
	if len(data) < 14 {
		f.protos |= pOther
		return
	}
	f.hasMAC = true
	copy(f.dstMAC[:], data[0:6])
	copy(f.srcMAC[:], data[6:12])
	et, payload := binary.BigEndian.Uint16(data[12:14]), data[14:]
	if et < 0x0600 { // an 802.3 length: LLC follows, trailing padding is cut
		if int(et) < len(payload) {
			payload = payload[:et]
		}
		et = etherLLC
	}
	for range 2 { // 802.1Q, maybe stacked once
		if et != etherDot1Q && et != etherQinQ {
			break
		}
		if len(payload) < 4 { // priority, DEI, VLAN id; type
			f.protos |= pOther
			return
		}
		f.protos |= pVLAN
		if f.vlan < 0 {
			f.vlan = int(binary.BigEndian.Uint16(payload[0:2]) & 0x0fff)
		}
		et, payload = binary.BigEndian.Uint16(payload[2:4]), payload[4:]
		if et < 0x0600 { // an 802.3 length: LLC follows
			et = etherLLC
		}
	}
	switch et {
	case etherLLC:
		llc(payload, f)
	case etherLLDP:
		f.protos |= pLLDP
		f.lldp = payload
	default:
		network(et, payload, f)
	}
}

// llc reads an 802.2 LLC frame: a BPDU (DSAP 0x42), or SNAP carrying CDP
// or PVST+.
func llc(b []byte, f *frame) {
	switch {
	case len(b) >= 3 && b[0] == 0x42 && b[1] == 0x42:
		f.protos |= pSTP
		f.bpdu = b[3:]
	case len(b) >= 8 && b[0] == 0xaa && b[1] == 0xaa && b[2] == 0x03 && [3]byte(b[3:6]) == ciscoOUI:
		switch binary.BigEndian.Uint16(b[6:8]) {
		case snapCDP:
			f.protos |= pCDP
			f.cdp = b[8:]
		case snapPVST:
			f.protos |= pSTP
			f.bpdu, f.bpduPVST = b[8:], true
		default:
			f.protos |= pOther
		}
	default:
		f.protos |= pOther
	}
}

// network reads an ARP, IPv4 or IPv6 packet of Ethernet type et.
func network(et uint16, b []byte, f *frame) {
	switch et {
	case etherARP:
		// Ethernet and IPv4 only: hardware type 1, protocol 0x0800,
		// address sizes 6 and 4.
		if len(b) < 28 || binary.BigEndian.Uint16(b[0:2]) != 1 || binary.BigEndian.Uint16(b[2:4]) != etherIPv4 || b[4] != 6 || b[5] != 4 {
			f.protos |= pOther
			return
		}
		f.protos |= pARP
		f.arpOp = binary.BigEndian.Uint16(b[6:8])
		copy(f.arpSenderMAC[:], b[8:14])
		f.arpSender = netip.AddrFrom4([4]byte(b[14:18]))
		f.arpTarget = netip.AddrFrom4([4]byte(b[24:28]))
	case etherIPv4:
		ipv4(b, f)
	case etherIPv6:
		ipv6(b, f)
	default:
		f.protos |= pOther
	}
}
