package pcapsum

import (
	"strconv"
	"time"
)

// PacketInfo is what a pcap record header says of its packet.
type PacketInfo struct {
	// Timestamp is the time the packet was captured (UTC).
	Timestamp time.Time
	// CaptureLength is the number of bytes captured (the data's length).
	CaptureLength int
	// Length is the packet's length on the wire.
	Length int
}

// LinkType is a pcap data link type (LINKTYPE_* of the tcpdump.org
// registry): the framing of every packet of a capture.
type LinkType uint32

// The link types the analyzer decodes; packets of any other link type
// are counted as "other".
const (
	// LinkTypeEthernet is Ethernet II or 802.3 (DLT_EN10MB).
	LinkTypeEthernet LinkType = 1
	// LinkTypePPP is PPP, maybe in HDLC-like framing (ff 03).
	LinkTypePPP LinkType = 9
	// LinkTypePPPHDLC is PPP in HDLC-like framing (DLT_PPP_SERIAL).
	LinkTypePPPHDLC LinkType = 50
	// LinkTypeRaw is raw IPv4 or IPv6, told apart by the version.
	LinkTypeRaw LinkType = 101
	// LinkTypeCHDLC is Cisco HDLC: address, control, protocol.
	LinkTypeCHDLC LinkType = 104
	// LinkTypeIPv4 is raw IP (read as LinkTypeRaw is).
	LinkTypeIPv4 LinkType = 228
)

// String returns the link type's name, as the summary reports it.
func (t LinkType) String() string {
	switch t {
	case LinkTypeEthernet:
		return "Ethernet"
	case LinkTypePPP:
		return "PPP"
	case LinkTypePPPHDLC:
		return "PPP_HDLC"
	case LinkTypeRaw:
		return "Raw"
	case LinkTypeCHDLC:
		return "C_HDLC"
	case LinkTypeIPv4:
		return "IPv4"
	}
	return "UnknownLinkType(" + strconv.FormatUint(uint64(t), 10) + ")"
}
