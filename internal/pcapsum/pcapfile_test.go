package pcapsum

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// The reader tests read pcap streams with pcapReader and with pcapgo's
// Reader (which Read used before, with the same snap length bound), and
// require the same records and the same end.

// record is one packet read, or the end of a stream.
type record struct {
	ts           time.Time
	caplen, size int
	data         string
}

// readResult is all a reader read of a stream: its link type, records,
// and why it stopped (notPcap, or a Stop* value).
type readResult struct {
	notPcap  bool
	linkType uint8 // pcapgo's link type is a byte
	records  []record
	stopped  string
}

// stopOf is how Read ends on a reader's error.
func stopOf(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return StopEnd
	}
	return StopCorrupt
}

func readOurs(b []byte) readResult {
	pr, err := newPcapReader(bytes.NewReader(b), maxSnaplen)
	if err != nil {
		return readResult{notPcap: stopOf(err) != StopEnd, stopped: StopEnd}
	}
	res := readResult{linkType: uint8(pr.linkType)}
	for {
		data, pi, err := pr.next()
		if err != nil {
			res.stopped = stopOf(err)
			return res
		}
		res.records = append(res.records, record{pi.Timestamp, pi.CaptureLength, pi.Length, string(data)})
	}
}

func readPcapgo(b []byte) readResult {
	pr, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		return readResult{notPcap: stopOf(err) != StopEnd, stopped: StopEnd}
	}
	if s := pr.Snaplen(); s == 0 || s > maxSnaplen {
		pr.SetSnaplen(maxSnaplen)
	}
	res := readResult{linkType: uint8(pr.LinkType())}
	for {
		data, ci, err := pr.ZeroCopyReadPacketData()
		if err != nil {
			res.stopped = stopOf(err)
			return res
		}
		res.records = append(res.records, record{ci.Timestamp, ci.CaptureLength, ci.Length, string(data)})
	}
}

// sameRead compares what both readers read. pcapgo multiplies a
// microsecond fraction by 1000 in 32 bits, so that a fraction of 4294968
// µs or more (only a corrupt record has one) wraps: there our timestamp is
// later by a multiple of 2³² ns.
func sameRead(t *testing.T, name string, b []byte) readResult {
	t.Helper()
	got, want := readOurs(b), readPcapgo(b)
	if got.notPcap != want.notPcap || got.stopped != want.stopped || got.linkType != want.linkType || len(got.records) != len(want.records) {
		t.Fatalf("%s (%x):\nours   %+v\npcapgo %+v", name, b[:min(len(b), 64)], got, want)
	}
	for i, g := range got.records {
		w := want.records[i]
		d := g.ts.Sub(w.ts)
		if g.caplen != w.caplen || g.size != w.size || g.data != w.data || g.ts.Location() != w.ts.Location() || d < 0 || d%(1<<32) != 0 {
			t.Fatalf("%s: record %d:\nours   %+v\npcapgo %+v", name, i, g, want.records[i])
		}
	}
	// Read ends the same way.
	s, err := Read(context.Background(), bytes.NewReader(b), Options{MaxPackets: MaxMaxPackets})
	if errors.Is(err, ErrNotPcap) != got.notPcap || (err == nil && (s.Stopped != got.stopped || s.Scanned != len(got.records))) {
		t.Fatalf("%s: Read: %v, stopped %s after %d records; want %+v", name, err, s.Stopped, s.Scanned, got)
	}
	return got
}

// writePcap writes pkts with pcapgo (little-endian), microsecond or
// nanosecond timestamps.
func writePcap(t testing.TB, nanos bool, snaplen uint32, lt layers.LinkType, pkts [][]byte) []byte {
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if nanos {
		w = pcapgo.NewWriterNanos(&buf)
	}
	if err := w.WriteFileHeader(snaplen, lt); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for i, p := range pkts {
		ci := gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(i) * 1234567891 * time.Nanosecond), CaptureLength: len(p), Length: len(p) + i%3}
		if err := w.WritePacket(ci, p); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// bigEndian rewrites a little-endian pcap stream in big-endian order.
func bigEndian(b []byte) []byte {
	out := bytes.Clone(b)
	swap32 := func(off int) { binary.BigEndian.PutUint32(out[off:], binary.LittleEndian.Uint32(b[off:])) }
	swap16 := func(off int) { binary.BigEndian.PutUint16(out[off:], binary.LittleEndian.Uint16(b[off:])) }
	swap32(0)
	swap16(4)
	swap16(6)
	for off := 8; off < 24; off += 4 {
		swap32(off)
	}
	for off := 24; off+16 <= len(b); {
		for i := range 4 {
			swap32(off + 4*i)
		}
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	return out
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testPackets() [][]byte {
	var pkts [][]byte
	for i := range 12 {
		p := make([]byte, 1+i*97)
		for j := range p {
			p[j] = byte(i + j)
		}
		pkts = append(pkts, p)
	}
	return append(pkts, nil)
}

func TestReaderMatchesPcapgo(t *testing.T) {
	pkts := testPackets()
	for _, tt := range []struct {
		name  string
		nanos bool
		big   bool
		gzip  bool
	}{
		{"microseconds little-endian", false, false, false},
		{"microseconds big-endian", false, true, false},
		{"nanoseconds little-endian", true, false, false},
		{"nanoseconds big-endian", true, true, false},
		{"gzipped", true, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := writePcap(t, tt.nanos, 65536, layers.LinkTypeEthernet, pkts)
			if tt.big {
				b = bigEndian(b)
			}
			if tt.gzip {
				b = gzipped(t, b)
			}
			got := sameRead(t, tt.name, b)
			if len(got.records) != len(pkts) || got.stopped != StopEnd || got.linkType != uint8(LinkTypeEthernet) {
				t.Fatalf("%+v", got)
			}
			for i, r := range got.records {
				want := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC).Add(time.Duration(i) * 1234567891 * time.Nanosecond)
				if !tt.nanos {
					want = want.Truncate(time.Microsecond)
				}
				if !r.ts.Equal(want) || r.ts.Location() != time.UTC || r.data != string(pkts[i]) || r.caplen != len(pkts[i]) || r.size != len(pkts[i])+i%3 {
					t.Errorf("record %d: %v %d %d, want %v", i, r.ts, r.caplen, r.size, want)
				}
			}
		})
	}
}

// header returns a little-endian pcap header.
func pcapHeader(magic uint32, major, minor uint16, snaplen, linkType uint32) []byte {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h[0:], magic)
	binary.LittleEndian.PutUint16(h[4:], major)
	binary.LittleEndian.PutUint16(h[6:], minor)
	binary.LittleEndian.PutUint32(h[16:], snaplen)
	binary.LittleEndian.PutUint32(h[20:], linkType)
	return h
}

func pcapRecord(frac, caplen, size uint32, data []byte) []byte {
	r := make([]byte, 16)
	binary.LittleEndian.PutUint32(r[0:], 1700000000)
	binary.LittleEndian.PutUint32(r[4:], frac)
	binary.LittleEndian.PutUint32(r[8:], caplen)
	binary.LittleEndian.PutUint32(r[12:], size)
	return append(r, data...)
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestReaderEnds(t *testing.T) {
	good := pcapHeader(magicMicros, 2, 4, 65536, 1)
	pkt := bytes.Repeat([]byte{7}, 100)
	big := make([]byte, maxSnaplen+1)
	for _, tt := range []struct {
		name    string
		in      []byte
		notPcap bool
		stopped string
		records int
	}{
		{"empty", nil, false, StopEnd, 0},
		{"one byte", []byte{0xd4}, false, StopEnd, 0},
		{"header cut", good[:23], false, StopEnd, 0},
		{"header only", good, false, StopEnd, 0},
		{"html", []byte("<html><body>not a capture</body></html>"), true, StopEnd, 0},
		{"pcapng", bytes.Repeat([]byte{0x0a, 0x0d, 0x0d, 0x0a}, 10), true, StopEnd, 0},
		{"version 2.3", pcapHeader(magicMicros, 2, 3, 65536, 1), true, StopEnd, 0},
		{"version 1.4", pcapHeader(magicNanos, 1, 4, 65536, 1), true, StopEnd, 0},
		{"gzip garbage", []byte{0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, true, StopEnd, 0},
		{"gzip cut", gzipped(t, good)[:12], false, StopEnd, 0},
		{"records", cat(good, pcapRecord(1, 100, 100, pkt), pcapRecord(2, 50, 60, pkt[:50])), false, StopEnd, 2},
		{"record header cut", cat(good, pcapRecord(1, 100, 100, pkt), pcapRecord(2, 50, 60, nil)[:9]), false, StopEnd, 1},
		{"record data cut", cat(good, pcapRecord(1, 100, 100, pkt), pcapRecord(2, 50, 60, pkt[:20])), false, StopEnd, 1},
		{"record data missing", cat(good, pcapRecord(1, 100, 100, pkt[:0])), false, StopEnd, 0},
		{"captured above the packet length", cat(good, pcapRecord(1, 100, 99, pkt)), false, StopCorrupt, 0},
		{"captured above the snap length", cat(pcapHeader(magicMicros, 2, 4, 64, 1), pcapRecord(1, 64, 64, pkt[:64]), pcapRecord(1, 65, 65, pkt[:65])), false, StopCorrupt, 1},
		{"captured above the bound, snap length 0", cat(pcapHeader(magicMicros, 2, 4, 0, 1), pcapRecord(1, maxSnaplen+1, maxSnaplen+1, big)), false, StopCorrupt, 0},
		{"captured at the bound, snap length 4 GiB", cat(pcapHeader(magicMicros, 2, 4, 1<<32-1, 1), pcapRecord(1, maxSnaplen, maxSnaplen, big[:maxSnaplen])), false, StopEnd, 1},
		{"captured length 4 GiB", cat(good, pcapRecord(1, 1<<32-1, 1<<32-1, nil)), false, StopCorrupt, 0},
		{"empty record", cat(good, pcapRecord(1, 0, 0, nil)), false, StopEnd, 1},
		{"fraction wraps in pcapgo", cat(good, pcapRecord(999999999, 1, 1, pkt[:1])), false, StopEnd, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := sameRead(t, tt.name, tt.in)
			if got.notPcap != tt.notPcap || got.stopped != tt.stopped || len(got.records) != tt.records {
				t.Errorf("not pcap %v, stopped %s after %d records", got.notPcap, got.stopped, len(got.records))
			}
		})
	}
}

// TestReaderMatchesPcapgoMutated reads damaged streams: bytes changed,
// header fields set to edge values, cut short.
func TestReaderMatchesPcapgoMutated(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pkts := testPackets()[:5]
	var bases [][]byte
	for _, nanos := range []bool{false, true} {
		b := writePcap(t, nanos, 2048, layers.LinkTypeEthernet, pkts)
		bases = append(bases, b, bigEndian(b))
	}
	edges := []uint32{0, 1, 2, 4, 99, 100, 2048, 2049, maxSnaplen, maxSnaplen + 1, 999999, 1e9, 1<<32 - 1}
	seen := map[string]int{}
	for i := range 20000 {
		b := bytes.Clone(bases[rng.IntN(len(bases))])
		for range 1 + rng.IntN(3) {
			if len(b) < 64 {
				break
			}
			switch rng.IntN(4) {
			case 0: // a header byte
				b[rng.IntN(64)] = byte(rng.UintN(256))
			case 1: // a field of the global or the first record header
				off := 4 * rng.IntN(10)
				v := edges[rng.IntN(len(edges))]
				if b[0] == 0xa1 || b[0] == 0x4d {
					binary.BigEndian.PutUint32(b[off:], v)
				} else {
					binary.LittleEndian.PutUint32(b[off:], v)
				}
			case 2: // any byte
				b[rng.IntN(len(b))] = byte(rng.UintN(256))
			default: // cut short
				b = b[:rng.IntN(len(b)+1)]
			}
		}
		if rng.IntN(10) == 0 {
			b = gzipped(t, b)
		}
		r := sameRead(t, "mutation "+strconv.Itoa(i), b)
		seen[fmt.Sprint(r.notPcap, r.stopped)]++
	}
	t.Logf("ends (not pcap, stopped): %v", seen)
	if len(seen) < 3 {
		t.Errorf("the mutations reach only %v", seen)
	}
}

// TestReaderReusesItsBuffer: reading packets allocates nothing once the
// buffer has grown.
func TestReaderReusesItsBuffer(t *testing.T) {
	b := writePcap(t, false, 65536, layers.LinkTypeEthernet, testPackets())
	for range 6 {
		b = append(b, b[24:]...)
	}
	pr, err := newPcapReader(bytes.NewReader(b), maxSnaplen)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pr.next(); err != nil {
		t.Fatal(err)
	}
	n := 0
	allocs := testing.AllocsPerRun(1, func() {
		for {
			if _, _, err := pr.next(); err != nil {
				return
			}
			n++
		}
	})
	if n < 500 || allocs > 8 {
		t.Errorf("%v allocations for %d packets", allocs, n)
	}
}
