package pcapsum

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// oracle is the decoder this package had when it used gopacket's layers,
// kept as the test oracle of decoder: for any packet, both must fill the
// same frame.
type oracle struct {
	linkType layers.LinkType
	eth      layers.Ethernet
	dot1q    layers.Dot1Q
	ip4      layers.IPv4
	ip6      layers.IPv6
	tcp      layers.TCP
	udp      layers.UDP
	icmp4    layers.ICMPv4
	icmp6    layers.ICMPv6
}

// decode fills f from data, as far as it can read it; what it cannot
// read is "other".
func (d *oracle) decode(data []byte, f *frame) {
	f.vlan = -1
	switch d.linkType {
	case layers.LinkTypeEthernet:
		d.ethernet(data, f)
	case layers.LinkTypeC_HDLC: // address, control, protocol
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
		d.network(layers.EthernetType(et), data[4:], f)
	case layers.LinkTypePPP, layers.LinkTypePPP_HDLC: // PPP in HDLC-like framing (DLT_PPP_SERIAL): ff 03 protocol
		if len(data) >= 2 && data[0] == 0xff && data[1] == 0x03 {
			data = data[2:]
		}
		if len(data) < 2 {
			f.protos |= pOther
			return
		}
		switch binary.BigEndian.Uint16(data[:2]) {
		case 0x0021:
			d.network(layers.EthernetTypeIPv4, data[2:], f)
		case 0x0057:
			d.network(layers.EthernetTypeIPv6, data[2:], f)
		default:
			f.protos |= pOther
		}
	case layers.LinkTypeRaw, 228: // raw IPv4 or IPv6
		if len(data) > 0 && data[0]>>4 == 6 {
			d.network(layers.EthernetTypeIPv6, data, f)
		} else {
			d.network(layers.EthernetTypeIPv4, data, f)
		}
	default:
		f.protos |= pOther
	}
}

func (d *oracle) ethernet(data []byte, f *frame) {
	if d.eth.DecodeFromBytes(data, gopacket.NilDecodeFeedback) != nil {
		f.protos |= pOther
		return
	}
	f.hasMAC = true
	copy(f.srcMAC[:], d.eth.SrcMAC)
	copy(f.dstMAC[:], d.eth.DstMAC)
	et, payload := d.eth.EthernetType, d.eth.Payload
	for range 2 { // 802.1Q, maybe stacked once
		if et != layers.EthernetTypeDot1Q && et != layers.EthernetTypeQinQ {
			break
		}
		if d.dot1q.DecodeFromBytes(payload, gopacket.NilDecodeFeedback) != nil {
			f.protos |= pOther
			return
		}
		f.protos |= pVLAN
		if f.vlan < 0 {
			f.vlan = int(d.dot1q.VLANIdentifier)
		}
		et, payload = d.dot1q.Type, d.dot1q.Payload
		if et < 0x0600 { // an 802.3 length: LLC follows
			et = layers.EthernetTypeLLC
		}
	}
	switch et {
	case layers.EthernetTypeLLC:
		d.llc(payload, f)
	case etherLLDP:
		f.protos |= pLLDP
		f.lldp = payload
	default:
		d.network(et, payload, f)
	}
}

// llc reads an 802.2 LLC frame: a BPDU (DSAP 0x42), or SNAP carrying CDP
// or PVST+.
func (d *oracle) llc(b []byte, f *frame) {
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

// network reads an ARP, IPv4 or IPv6 packet.
func (d *oracle) network(et layers.EthernetType, b []byte, f *frame) {
	switch et {
	case layers.EthernetTypeARP:
		// Read by hand: gopacket's ARP decoder computes its length in a
		// byte, which a crafted packet overflows.
		if len(b) < 28 || binary.BigEndian.Uint16(b[0:2]) != 1 || binary.BigEndian.Uint16(b[2:4]) != 0x0800 || b[4] != 6 || b[5] != 4 {
			f.protos |= pOther
			return
		}
		f.protos |= pARP
		f.arpOp = binary.BigEndian.Uint16(b[6:8])
		copy(f.arpSenderMAC[:], b[8:14])
		f.arpSender = netip.AddrFrom4([4]byte(b[14:18]))
		f.arpTarget = netip.AddrFrom4([4]byte(b[24:28]))
	case layers.EthernetTypeIPv4:
		if d.ip4.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil || len(d.ip4.SrcIP) != 4 || len(d.ip4.DstIP) != 4 {
			f.protos |= pOther
			return
		}
		f.protos |= pIPv4
		f.src, f.dst = netip.AddrFrom4([4]byte(d.ip4.SrcIP)), netip.AddrFrom4([4]byte(d.ip4.DstIP))
		f.ttl = d.ip4.TTL
		if d.ip4.FragOffset != 0 {
			return // a later fragment: no transport header
		}
		d.transport(uint8(d.ip4.Protocol), d.ip4.Payload, f)
	case layers.EthernetTypeIPv6:
		if d.ip6.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil || len(d.ip6.SrcIP) != 16 || len(d.ip6.DstIP) != 16 {
			f.protos |= pOther
			return
		}
		f.protos |= pIPv6
		f.src, f.dst = netip.AddrFrom16([16]byte(d.ip6.SrcIP)), netip.AddrFrom16([16]byte(d.ip6.DstIP))
		f.ttl = d.ip6.HopLimit
		d.transport(uint8(d.ip6.NextHeader), d.ip6.Payload, f)
	default:
		f.protos |= pOther
	}
}

// transport reads TCP, UDP, ICMP, ICMPv6 and OSPF.
func (d *oracle) transport(p uint8, b []byte, f *frame) {
	switch layers.IPProtocol(p) {
	case layers.IPProtocolTCP:
		if d.tcp.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		f.protos |= pTCP
		f.sport, f.dport = uint16(d.tcp.SrcPort), uint16(d.tcp.DstPort)
		f.tcpSeq, f.tcpPayload = d.tcp.Seq, len(d.tcp.Payload)
		for _, fl := range []struct {
			on  bool
			bit uint8
		}{{d.tcp.FIN, tcpFIN}, {d.tcp.SYN, tcpSYN}, {d.tcp.RST, tcpRST}, {d.tcp.PSH, tcpPSH}, {d.tcp.ACK, tcpACK}} {
			if fl.on {
				f.tcpFlags |= fl.bit
			}
		}
		if f.sport == portBGP || f.dport == portBGP {
			f.protos |= pBGP
			f.bgp = d.tcp.Payload
		}
	case layers.IPProtocolUDP:
		if d.udp.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		f.protos |= pUDP
		f.sport, f.dport = uint16(d.udp.SrcPort), uint16(d.udp.DstPort)
	case layers.IPProtocolICMPv4:
		if d.icmp4.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		f.protos |= pICMP
		f.icmpType, f.icmpCode = d.icmp4.TypeCode.Type(), d.icmp4.TypeCode.Code()
		f.icmpID, f.icmpSeq = d.icmp4.Id, d.icmp4.Seq
		f.icmpInner = d.icmp4.Payload
	case layers.IPProtocolICMPv6:
		if d.icmp6.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		f.protos |= pICMP6
		f.icmpType, f.icmpCode = d.icmp6.TypeCode.Type(), d.icmp6.TypeCode.Code()
		if len(d.icmp6.Payload) >= 4 && (f.icmpType == 128 || f.icmpType == 129) {
			f.icmpID, f.icmpSeq = binary.BigEndian.Uint16(d.icmp6.Payload[0:2]), binary.BigEndian.Uint16(d.icmp6.Payload[2:4])
		}
	case ipProtoOSPF:
		f.protos |= pOSPF
		f.ospf = b
	}
}
