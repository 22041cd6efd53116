package pcapsum

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxText bounds a text a device sends (a CDP device id, an LLDP name).
const maxText = 64

// cleanText makes device-sent bytes safe to show: valid UTF-8, no
// control characters, at most maxText runes.
func cleanText(b []byte) string {
	var sb strings.Builder
	n := 0
	for len(b) > 0 && n < maxText {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == utf8.RuneError || unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
			r = '?'
		}
		sb.WriteRune(r)
		n++
	}
	if len(b) > 0 {
		sb.WriteString("...")
	}
	return strings.TrimSpace(sb.String())
}

func ip4(b []byte) string { return netip.AddrFrom4([4]byte(b)).String() }

// ospfHeader is the OSPFv2 common header (RFC 2328 A.3.1).
type ospfHeader struct {
	typ      uint8
	routerID string
	area     string
	auType   uint16
	body     []byte
}

// parseOSPF reads an OSPFv2 packet; ok false when it is not one.
func parseOSPF(b []byte) (h ospfHeader, ok bool) {
	if len(b) < 24 || b[0] != 2 {
		return h, false
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < 24 || n > len(b) {
		n = len(b)
	}
	return ospfHeader{
		typ: b[1], routerID: ip4(b[4:8]), area: ip4(b[8:12]),
		auType: binary.BigEndian.Uint16(b[14:16]), body: b[24:n],
	}, true
}

// ospfHello is the body of an OSPFv2 Hello (RFC 2328 A.3.2).
type ospfHello struct {
	mask       string
	hello      int
	options    uint8
	priority   int
	dead       int
	dr, bdr    string
	neighbours int
}

func parseHello(b []byte) (ospfHello, bool) {
	if len(b) < 20 {
		return ospfHello{}, false
	}
	return ospfHello{
		mask: ip4(b[0:4]), hello: int(binary.BigEndian.Uint16(b[4:6])), options: b[6], priority: int(b[7]),
		dead: int(binary.BigEndian.Uint32(b[8:12])), dr: ip4(b[12:16]), bdr: ip4(b[16:20]), neighbours: (len(b) - 20) / 4,
	}, true
}

// parseDBDMTU reads the interface MTU of an OSPFv2 Database Description
// (RFC 2328 A.3.3).
func parseDBDMTU(b []byte) (int, bool) {
	if len(b) < 8 {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(b[0:2])), true
}

// ospfTypes name the OSPF packet types.
var ospfTypes = map[uint8]string{1: "hello", 2: "db-description", 3: "ls-request", 4: "ls-update", 5: "ls-ack"}

// bgpMessage is one BGP message of a TCP segment (RFC 4271 4.1).
type bgpMessage struct {
	typ  uint8
	body []byte
}

// parseBGP reads the BGP messages a segment starts with (a segment that
// does not start at a message boundary gives none).
func parseBGP(b []byte, each func(bgpMessage)) {
	for len(b) >= 19 {
		for _, x := range b[:16] {
			if x != 0xff {
				return
			}
		}
		n := int(binary.BigEndian.Uint16(b[16:18]))
		if n < 19 || n > 4096 || n > len(b) {
			return
		}
		each(bgpMessage{typ: b[18], body: b[19:n]})
		b = b[n:]
	}
}

// bgpOpen is a BGP OPEN (RFC 4271 4.2, and the 4-octet AS capability of
// RFC 6793).
type bgpOpen struct {
	version  int
	as       uint32
	holdTime int
	routerID string
}

func parseOpen(b []byte) (bgpOpen, bool) {
	if len(b) < 10 {
		return bgpOpen{}, false
	}
	o := bgpOpen{version: int(b[0]), as: uint32(binary.BigEndian.Uint16(b[1:3])), holdTime: int(binary.BigEndian.Uint16(b[3:5])), routerID: ip4(b[5:9])}
	params := b[10:]
	if l := int(b[9]); l < len(params) {
		params = params[:l]
	}
	for len(params) >= 2 {
		ptype, plen := params[0], int(params[1])
		if 2+plen > len(params) {
			break
		}
		if ptype == 2 { // capabilities
			caps := params[2 : 2+plen]
			for len(caps) >= 2 {
				code, clen := caps[0], int(caps[1])
				if 2+clen > len(caps) {
					break
				}
				if code == 65 && clen == 4 {
					o.as = binary.BigEndian.Uint32(caps[2:6])
				}
				caps = caps[2+clen:]
			}
		}
		params = params[2+plen:]
	}
	return o, true
}

// bgpErrors name the NOTIFICATION error codes and subcodes (RFC 4271
// 4.5, RFC 4486).
var bgpErrors = map[uint8]struct {
	name string
	sub  map[uint8]string
}{
	1: {"message header error", map[uint8]string{1: "connection not synchronized", 2: "bad message length", 3: "bad message type"}},
	2: {"OPEN message error", map[uint8]string{1: "unsupported version number", 2: "bad peer AS", 3: "bad BGP identifier",
		4: "unsupported optional parameter", 6: "unacceptable hold time", 7: "unsupported capability"}},
	3: {"UPDATE message error", map[uint8]string{1: "malformed attribute list", 3: "missing well-known attribute",
		5: "attribute length error", 6: "invalid ORIGIN attribute", 8: "invalid NEXT_HOP attribute", 11: "malformed AS_PATH"}},
	4: {"hold timer expired", nil},
	5: {"finite state machine error", nil},
	6: {"cease", map[uint8]string{1: "maximum number of prefixes reached", 2: "administrative shutdown", 3: "peer de-configured",
		4: "administrative reset", 5: "connection rejected", 6: "other configuration change", 7: "connection collision resolution", 8: "out of resources"}},
}

// bgpErrorText names a NOTIFICATION's code and subcode.
func bgpErrorText(code, sub uint8) string {
	e, ok := bgpErrors[code]
	if !ok {
		return fmt.Sprintf("error code %d/%d", code, sub)
	}
	if s, ok := e.sub[sub]; ok {
		return e.name + ": " + s
	}
	if sub != 0 {
		return fmt.Sprintf("%s (subcode %d)", e.name, sub)
	}
	return e.name
}

// bgpTypes name the BGP message types.
var bgpTypes = map[uint8]string{1: "open", 2: "update", 3: "notification", 4: "keepalive", 5: "route-refresh"}

// bpdu is a spanning-tree BPDU (IEEE 802.1D 9.3, 802.1w).
type bpdu struct {
	version  int // 0 STP, 2 RSTP, 3 MSTP
	typ      uint8
	tc       bool
	role     string // RSTP: the sender's port role
	rootID   string
	rootCost uint32
	bridgeID string
	portID   string
}

// bridgeID renders an 8-byte bridge id as "priority.mac" (the priority
// holds the VLAN of PVST+ and MSTP: 32769 = 32768 + VLAN 1).
func bridgeID(b []byte) string {
	return fmt.Sprintf("%d.%s", binary.BigEndian.Uint16(b[0:2]), net.HardwareAddr(b[2:8]))
}

// rstpRoles are the port roles of the RSTP flags (bits 2-3).
var rstpRoles = [4]string{"unknown", "alternate/backup", "root", "designated"}

func parseBPDU(b []byte) (bpdu, bool) {
	if len(b) < 4 || b[0] != 0 || b[1] != 0 {
		return bpdu{}, false
	}
	p := bpdu{version: int(b[2]), typ: b[3]}
	if p.typ == 0x80 { // topology change notification
		return p, true
	}
	if len(b) < 35 {
		return bpdu{}, false
	}
	flags := b[4]
	p.tc = flags&0x01 != 0
	if p.version >= 2 {
		p.role = rstpRoles[(flags>>2)&3]
	}
	p.rootID = bridgeID(b[5:13])
	p.rootCost = binary.BigEndian.Uint32(b[13:17])
	p.bridgeID = bridgeID(b[17:25])
	p.portID = fmt.Sprintf("%d.%d", b[25]>>4, binary.BigEndian.Uint16(b[25:27])&0x0fff)
	return p, true
}

// Neighbour is a CDP or LLDP advertisement.
type Neighbour struct {
	DeviceID   string `json:"device_id"`
	PortID     string `json:"port_id,omitempty"`
	Platform   string `json:"platform,omitempty"`
	NativeVLAN int    `json:"native_vlan,omitempty"`
	Address    string `json:"address,omitempty"`
	SourceMAC  string `json:"source_mac,omitempty"`
}

// parseCDP reads a CDP advertisement (version, ttl, checksum, then TLVs:
// device id 1, addresses 2, port id 3, platform 6, native VLAN 10).
func parseCDP(b []byte) (Neighbour, bool) {
	if len(b) < 4 {
		return Neighbour{}, false
	}
	var n Neighbour
	b = b[4:]
	for len(b) >= 4 {
		t, l := binary.BigEndian.Uint16(b[0:2]), int(binary.BigEndian.Uint16(b[2:4]))
		if l < 4 || l > len(b) {
			break
		}
		v := b[4:l]
		switch t {
		case 1:
			n.DeviceID = cleanText(v)
		case 2:
			n.Address = cdpAddress(v)
		case 3:
			n.PortID = cleanText(v)
		case 6:
			n.Platform = cleanText(v)
		case 10:
			if len(v) == 2 {
				n.NativeVLAN = int(binary.BigEndian.Uint16(v))
			}
		}
		b = b[l:]
	}
	return n, n.DeviceID != ""
}

// cdpAddress reads the first IPv4 address of a CDP addresses TLV.
func cdpAddress(v []byte) string {
	if len(v) < 4 {
		return ""
	}
	count := binary.BigEndian.Uint32(v[0:4])
	v = v[4:]
	for range min(count, 8) {
		if len(v) < 2 {
			return ""
		}
		plen := int(v[1])
		if len(v) < 2+plen+2 {
			return ""
		}
		proto := v[2 : 2+plen]
		alen := int(binary.BigEndian.Uint16(v[2+plen : 4+plen]))
		if len(v) < 4+plen+alen {
			return ""
		}
		if plen == 1 && proto[0] == 0xcc && alen == 4 {
			return ip4(v[4+plen : 8+plen])
		}
		v = v[4+plen+alen:]
	}
	return ""
}

// parseLLDP reads an LLDPDU (IEEE 802.1AB: chassis id 1, port id 2,
// port description 4, system name 5, system description 6, management
// address 8).
func parseLLDP(b []byte) (Neighbour, bool) {
	var n Neighbour
	for len(b) >= 2 {
		h := binary.BigEndian.Uint16(b[0:2])
		t, l := int(h>>9), int(h&0x1ff)
		if t == 0 || 2+l > len(b) {
			break
		}
		v := b[2 : 2+l]
		switch t {
		case 1:
			n.DeviceID = lldpID(v, 4)
		case 2:
			n.PortID = lldpID(v, 3)
		case 5:
			if name := cleanText(v); name != "" {
				n.DeviceID = name // the system name reads better than a chassis MAC
			}
		case 6:
			n.Platform = cleanText(v)
		case 8:
			if len(v) >= 6 && v[0] == 5 && v[1] == 1 {
				n.Address = ip4(v[2:6])
			}
		}
		b = b[2+l:]
	}
	return n, n.DeviceID != "" || n.PortID != ""
}

// lldpID reads a chassis or port id: subtype, then the id (a MAC for
// macSubtype, an IPv4 network address for subtype 5, else text).
func lldpID(v []byte, macSubtype byte) string {
	if len(v) < 2 {
		return ""
	}
	switch {
	case v[0] == macSubtype && len(v) == 7:
		return net.HardwareAddr(v[1:7]).String()
	case v[0] == 5 && len(v) == 6 && v[1] == 1:
		return ip4(v[2:6])
	}
	return cleanText(v[1:])
}
