package pcapsum

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Magic numbers of a classic pcap file (libpcap format 2.4), as its first
// four bytes read little-endian: microsecond or nanosecond timestamps,
// written little-endian or big-endian.
const (
	magicMicros   = 0xa1b2c3d4
	magicMicrosBE = 0xd4c3b2a1
	magicNanos    = 0xa1b23c4d
	magicNanosBE  = 0x4d3cb2a1
)

// The pcap format version read.
const (
	pcapMajor = 2
	pcapMinor = 4
)

// pcapReader reads the records of a classic pcap stream (not pcapng),
// gzip-compressed or not, into one reused buffer.
type pcapReader struct {
	r        io.Reader // buffered
	order    binary.ByteOrder
	fracNs   int64 // nanoseconds per unit of a record's fraction of a second
	snaplen  uint32
	linkType LinkType
	hdr      [16]byte
	buf      []byte
}

// newPcapReader reads the 24-byte global header of r. Its error wraps
// io.EOF or io.ErrUnexpectedEOF when r ends before the header does.
// snaplen bounds the captured length of a record, whatever the header
// says (a header's snap length counts only when it is smaller).
func newPcapReader(r io.Reader, snaplen uint32) (*pcapReader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil {
		return nil, fmt.Errorf("pcap header: %w", err)
	}
	p := &pcapReader{r: br}
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzipped pcap: %w", err)
		}
		p.r = zr
	}
	var h [24]byte
	if _, err := io.ReadFull(p.r, h[:]); err != nil {
		return nil, fmt.Errorf("pcap header: %w", err)
	}
	switch m := binary.LittleEndian.Uint32(h[0:4]); m {
	case magicMicros:
		p.order, p.fracNs = binary.LittleEndian, 1000
	case magicMicrosBE:
		p.order, p.fracNs = binary.BigEndian, 1000
	case magicNanos:
		p.order, p.fracNs = binary.LittleEndian, 1
	case magicNanosBE:
		p.order, p.fracNs = binary.BigEndian, 1
	default:
		return nil, fmt.Errorf("pcap header: unknown magic %08x", m)
	}
	if major, minor := p.order.Uint16(h[4:6]), p.order.Uint16(h[6:8]); major != pcapMajor || minor != pcapMinor {
		return nil, fmt.Errorf("pcap header: unknown version %d.%d", major, minor)
	}
	// 8:12 the time zone and 12:16 the accuracy, both unused.
	p.snaplen = snaplen
	if s := p.order.Uint32(h[16:20]); s != 0 && s < snaplen {
		p.snaplen = s
	}
	// The link type is the low 16 bits; the high ones may say whether
	// frames carry their FCS.
	p.linkType = LinkType(p.order.Uint32(h[20:24]) & 0xffff)
	return p, nil
}

// next reads the next record. data is valid until the next call. The
// error wraps io.EOF at the end of the stream, io.ErrUnexpectedEOF in the
// middle of a record, and is a corrupt stream's error otherwise (a
// captured length above the snap length or the packet's length).
func (p *pcapReader) next() (data []byte, pi PacketInfo, err error) {
	if _, err := io.ReadFull(p.r, p.hdr[:]); err != nil {
		return nil, PacketInfo{}, fmt.Errorf("pcap record header: %w", err)
	}
	sec, frac := p.order.Uint32(p.hdr[0:4]), p.order.Uint32(p.hdr[4:8])
	caplen, length := p.order.Uint32(p.hdr[8:12]), p.order.Uint32(p.hdr[12:16])
	if caplen > p.snaplen {
		return nil, PacketInfo{}, fmt.Errorf("pcap record: captured length %d exceeds the snap length %d", caplen, p.snaplen)
	}
	if caplen > length {
		return nil, PacketInfo{}, fmt.Errorf("pcap record: captured length %d exceeds the packet length %d", caplen, length)
	}
	if int(caplen) > cap(p.buf) {
		// Grow geometrically, never above the snap length.
		p.buf = make([]byte, min(max(int(caplen), 2*cap(p.buf), 4096), int(p.snaplen)))
	}
	data = p.buf[:caplen]
	if _, err := io.ReadFull(p.r, data); err != nil {
		return nil, PacketInfo{}, fmt.Errorf("pcap record data: %w", err)
	}
	pi = PacketInfo{
		Timestamp:     time.Unix(int64(sec), int64(frac)*p.fracNs).UTC(),
		CaptureLength: int(caplen),
		Length:        int(length),
	}
	return data, pi, nil
}
