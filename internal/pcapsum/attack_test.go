package pcapsum_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"agentchat/internal/pcapsum"
	"agentchat/internal/pcapsum/pcaptest"
)

// rawPcap builds a pcap stream by hand: header fields and records as
// given, so that they can lie.
func rawPcap(snaplen uint32, records ...[]byte) []byte {
	var b bytes.Buffer
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h[0:4], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:6], 2)
	binary.LittleEndian.PutUint16(h[6:8], 4)
	binary.LittleEndian.PutUint32(h[16:20], snaplen)
	binary.LittleEndian.PutUint32(h[20:24], 1)
	b.Write(h)
	for _, r := range records {
		b.Write(r)
	}
	return b.Bytes()
}

func record(caplen, length uint32, data []byte) []byte {
	r := make([]byte, 16, 16+len(data))
	binary.LittleEndian.PutUint32(r[0:4], 1700000000)
	binary.LittleEndian.PutUint32(r[8:12], caplen)
	binary.LittleEndian.PutUint32(r[12:16], length)
	return append(r, data...)
}

// TestHostileStreams: lying headers and crafted packets neither panic nor
// make the reader allocate what they claim.
func TestHostileStreams(t *testing.T) {
	arp := pcaptest.ARP(false, pcaptest.MAC(1), "10.0.0.1", "10.0.0.2", nil)
	badARP := append([]byte(nil), arp...)
	badARP[14+4] = 128 // hardware address size: gopacket's length byte overflows
	ospfShort := pcaptest.OSPFHello(pcaptest.MAC(1), "10.0.0.1", "1.1.1.1", "0.0.0.0", "255.255.255.0", 10, 40)
	ospfShort = ospfShort[:14+20+26] // the header claims more than is there
	cdpLie := pcaptest.CDP(pcaptest.MAC(3), "SW", "Gi0/1", "x", 1)
	binary.BigEndian.PutUint16(cdpLie[14+8+4+2:], 0xffff) // the first TLV claims 64 KiB
	bgpLie := pcaptest.TCP(pcaptest.MAC(1), pcaptest.MAC(2), "10.0.0.1", 179, "10.0.0.2", 5000, 1, pcaptest.PSH|pcaptest.ACK, append(pcaptest.BGPOpen(65001, 180, "1.1.1.1")[:18], 1))
	hostile := [][]byte{badARP, ospfShort, cdpLie, bgpLie, {}, {0xff}, make([]byte, 13)}

	var recs [][]byte
	for _, p := range hostile {
		recs = append(recs, record(uint32(len(p)), uint32(len(p)), p))
	}
	// Random and mutated packets.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var p []byte
		if rng.IntN(2) == 0 {
			p = make([]byte, rng.IntN(200))
			for i := range p {
				p[i] = byte(rng.UintN(256))
			}
		} else {
			src := [][]byte{arp, ospfShort, cdpLie, pcaptest.OSPFDBD(pcaptest.MAC(2), "10.0.0.2", "2.2.2.2", "0.0.0.0", 1500),
				pcaptest.STPConfig(pcaptest.MAC(4), 1, pcaptest.MAC(4), 0, 1, 1, 2), pcaptest.LLDP(pcaptest.MAC(5), "e1", "h"),
				pcaptest.ICMPUnreachable(pcaptest.MAC(1), pcaptest.MAC(2), "10.0.0.254", "10.0.0.1", "8.8.8.8", 13)}[rng.IntN(7)]
			p = append([]byte(nil), src...)
			for range 1 + rng.IntN(4) {
				p[rng.IntN(len(p))] = byte(rng.UintN(256))
			}
			p = p[:rng.IntN(len(p)+1)]
		}
		recs = append(recs, record(uint32(len(p)), uint32(len(p)), p))
	}
	probe := newProbe(bytes.NewReader(rawPcap(0xffffffff, recs...))) // a 4 GiB snap length
	s, err := pcapsum.Read(context.Background(), probe, pcapsum.Options{MaxPackets: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if s.Scanned != len(recs) || s.Stopped != pcapsum.StopEnd || s.Malformed == 0 {
		t.Errorf("scanned %d of %d, stopped %s, malformed %d", s.Scanned, len(recs), s.Stopped, s.Malformed)
	}
	if grew := probe.grew(); grew > 4<<20 {
		t.Errorf("heap grew by %d KiB", grew>>10)
	}

	// A record larger than the bound of one packet ends the reading
	// without allocating it.
	probe = newProbe(bytes.NewReader(rawPcap(0xffffffff, record(arpLen(arp), arpLen(arp), arp), record(1<<30, 1<<30, nil))))
	s, err = pcapsum.Read(context.Background(), probe, pcapsum.Options{})
	if err != nil || s.Packets != 1 || s.Stopped != pcapsum.StopCorrupt {
		t.Errorf("oversized record: %+v, %v", s, err)
	}
	if grew := probe.grew(); grew > 4<<20 {
		t.Errorf("heap grew by %d KiB", grew>>10)
	}
}

func arpLen(b []byte) uint32 { return uint32(len(b)) }

func TestNotPcap(t *testing.T) {
	for _, in := range [][]byte{[]byte("<html>not a capture</html>..."), bytes.Repeat([]byte{0x0a, 0x0d, 0x0d, 0x0a}, 10)} {
		if _, err := pcapsum.Read(context.Background(), bytes.NewReader(in), pcapsum.Options{}); !errors.Is(err, pcapsum.ErrNotPcap) {
			t.Errorf("%q: %v", in[:8], err)
		}
	}
	s, err := pcapsum.Read(context.Background(), bytes.NewReader(nil), pcapsum.Options{})
	if err != nil || s.Stopped != pcapsum.StopEnd || s.Packets != 0 {
		t.Errorf("empty stream: %+v, %v", s, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err = pcapsum.Read(ctx, pcaptest.FaultCapture().Reader(), pcapsum.Options{})
	if err != nil || s.Stopped != pcapsum.StopContext || s.Scanned != 0 {
		t.Errorf("cancelled: %+v, %v", s, err)
	}
}
