package pcapsum

import (
	"encoding/binary"
	"net/netip"
)

// IPv6 hop-by-hop option types.
const (
	hbhPad1  = 0
	hbhJumbo = 0xc2
)

// ipv4 reads an IPv4 header (RFC 791) and what it carries. It refuses a
// header shorter than 20 bytes, an IHL below 5 or above the total length,
// a header cut short and malformed options; a total length of 0 (TCP
// segmentation offload) stands for the data's length, and data past the
// total length is padding. The version is not checked.
func ipv4(b []byte, f *frame) {
	if len(b) < 20 {
		f.protos |= pOther
		return
	}
	hlen, total := int(b[0]&0x0f)*4, int(binary.BigEndian.Uint16(b[2:4]))
	if total == 0 {
		total = int(uint16(len(b))) // the field's width, as a sender would have written it
	}
	if total < 20 || hlen < 20 || hlen > total || hlen > len(b) {
		f.protos |= pOther
		return
	}
	if len(b) > total {
		b = b[:total]
	}
	if !ipv4Options(b[20:hlen]) {
		f.protos |= pOther
		return
	}
	f.protos |= pIPv4
	f.src, f.dst = netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
	f.ttl = b[8]
	if binary.BigEndian.Uint16(b[6:8])&0x1fff != 0 {
		return // a later fragment: no transport header
	}
	transport(b[9], b[hlen:], f)
}

// ipv4Options reports whether IPv4 options are well formed: end of list
// (0) ends them, no-operation (1) is one byte, any other is a type, a
// length of at least 3 that counts both, and data.
func ipv4Options(o []byte) bool {
	for len(o) > 0 {
		switch o[0] {
		case 0:
			return true
		case 1:
			o = o[1:]
		default:
			if len(o) < 2 {
				return false
			}
			n := int(o[1])
			if n <= 2 || n > len(o) {
				return false
			}
			o = o[n:]
		}
	}
	return true
}

// ipv6 reads an IPv6 header (RFC 8200) and what it carries. It refuses a
// header shorter than 40 bytes, a payload length of 0 without a jumbo
// payload option, and a malformed hop-by-hop header. A packet with a
// hop-by-hop header is read no further. Data past the payload length is
// padding.
func ipv6(b []byte, f *frame) {
	if len(b) < 40 {
		f.protos |= pOther
		return
	}
	plen, next, payload := int(binary.BigEndian.Uint16(b[4:6])), b[6], b[40:]
	if next == ipProto6HBH {
		if !hopByHop(payload, plen) {
			f.protos |= pOther
			return
		}
	} else if plen == 0 {
		f.protos |= pOther
		return
	}
	f.protos |= pIPv6
	f.src, f.dst = netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
	f.ttl = b[7]
	if next == ipProto6HBH {
		return // the hop-by-hop header is not skipped (MLD is IPv6 only)
	}
	if plen < len(payload) {
		payload = payload[:plen]
	}
	transport(next, payload, f)
}

// hopByHop reports whether b starts with a well-formed hop-by-hop header
// (RFC 8200 4.3) for an IPv6 payload length of plen: next header, length
// in 8-byte units after the first 8, then type-length-value options, each
// of which (Pad1 too) must have two bytes to read. A jumbo payload option
// (RFC 2675), the first one if several, must carry 4 bytes of a length
// above 65535, and goes with a payload length of 0; without it the
// payload length must not be 0.
func hopByHop(b []byte, plen int) bool {
	if len(b) < 2 {
		return false
	}
	end := int(b[1])*8 + 8
	if len(b) < end {
		return false
	}
	jumbo, seen := false, false
	for off := 2; off < end; {
		o := b[off:] // an option may run past the header: it is read from the rest
		if len(o) < 2 {
			return false
		}
		if o[0] == hbhPad1 {
			off++
			continue
		}
		n := int(o[1]) + 2
		if len(o) < n {
			return false
		}
		if o[0] == hbhJumbo && !seen {
			seen = true
			if n != 6 || binary.BigEndian.Uint32(o[2:6]) <= 0xffff {
				return false
			}
			jumbo = true
		}
		off += n
	}
	return jumbo == (plen == 0)
}

// transport reads TCP, UDP, ICMP, ICMPv6 and OSPF; a header it cannot
// read leaves only the IP protocol counted.
func transport(p uint8, b []byte, f *frame) {
	switch p {
	case ipProtoTCP:
		tcp(b, f)
	case ipProtoUDP:
		// Source and destination ports, length, checksum; a length of 0
		// is a jumbogram's, below 8 is refused.
		if len(b) < 8 {
			return
		}
		if n := binary.BigEndian.Uint16(b[4:6]); n != 0 && n < 8 {
			return
		}
		f.protos |= pUDP
		f.sport, f.dport = binary.BigEndian.Uint16(b[0:2]), binary.BigEndian.Uint16(b[2:4])
	case ipProtoICMP:
		// Type, code, checksum, identifier, sequence number.
		if len(b) < 8 {
			return
		}
		f.protos |= pICMP
		f.icmpType, f.icmpCode = b[0], b[1]
		f.icmpID, f.icmpSeq = binary.BigEndian.Uint16(b[4:6]), binary.BigEndian.Uint16(b[6:8])
		f.icmpInner = b[8:]
	case ipProtoICMP6:
		// Type, code, checksum; an echo's identifier and sequence number.
		if len(b) < 4 {
			return
		}
		f.protos |= pICMP6
		f.icmpType, f.icmpCode = b[0], b[1]
		if body := b[4:]; len(body) >= 4 && (f.icmpType == 128 || f.icmpType == 129) {
			f.icmpID, f.icmpSeq = binary.BigEndian.Uint16(body[0:2]), binary.BigEndian.Uint16(body[2:4])
		}
	case ipProtoOSPF:
		f.protos |= pOSPF
		f.ospf = b
	}
}

// tcp reads a TCP header (RFC 9293): ports, sequence number, data offset
// of at least 5 words within the data, flags, and well-formed options
// (end of list, no-operation, or a length of at least 2 within the
// header).
func tcp(b []byte, f *frame) {
	if len(b) < 20 {
		return
	}
	hlen := int(b[12]>>4) * 4
	if hlen < 20 || hlen > len(b) {
		return
	}
	for o := b[20:hlen]; len(o) > 0; {
		if o[0] == 0 {
			break
		}
		if o[0] == 1 {
			o = o[1:]
			continue
		}
		if len(o) < 2 {
			return
		}
		n := int(o[1])
		if n < 2 || n > len(o) {
			return
		}
		o = o[n:]
	}
	f.protos |= pTCP
	f.sport, f.dport = binary.BigEndian.Uint16(b[0:2]), binary.BigEndian.Uint16(b[2:4])
	f.tcpSeq = binary.BigEndian.Uint32(b[4:8])
	f.tcpFlags = b[13] & (tcpFIN | tcpSYN | tcpRST | tcpPSH | tcpACK)
	payload := b[hlen:]
	f.tcpPayload = len(payload)
	if f.sport == portBGP || f.dport == portBGP {
		f.protos |= pBGP
		f.bgp = payload
	}
}
