package pcapsum_test

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"testing"

	"agentchat/internal/pcapsum"
	"agentchat/internal/pcapsum/pcaptest"
)

// memProbe reads r and, every 256 KiB, measures the live heap after a
// GC: peak is the most the heap held while the stream was read.
type memProbe struct {
	r          io.Reader
	n, next    int64
	base, peak uint64
}

func newProbe(r io.Reader) *memProbe {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &memProbe{r: r, base: ms.HeapAlloc, peak: ms.HeapAlloc}
}

func (m *memProbe) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.n += int64(n)
	if m.n >= m.next {
		m.next += 256 << 10
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m.peak = max(m.peak, ms.HeapAlloc)
	}
	return n, err
}

func (m *memProbe) grew() uint64 { return m.peak - min(m.base, m.peak) }

// mixedPackets are 1000 packets of many hosts and protocols, ~1 KiB
// each.
func mixedPackets() [][]byte {
	var pkts [][]byte
	for i := range 1000 {
		a, b := strconv.Itoa(i%250+1), strconv.Itoa(i/250+1)
		src, dst := "10.1."+b+"."+a, "10.2."+b+"."+a
		switch i % 4 {
		case 0:
			pkts = append(pkts, pcaptest.UDP(pcaptest.MAC(byte(i)), pcaptest.MAC(1), src, uint16(1000+i), dst, 53, 1000))
		case 1:
			pkts = append(pkts, pcaptest.ARP(false, pcaptest.MAC(byte(i)), src, dst, nil))
		case 2:
			pkts = append(pkts, pcaptest.ICMPEcho(false, pcaptest.MAC(byte(i)), pcaptest.MAC(1), src, dst, uint16(i), 1))
		default:
			pkts = append(pkts, pcaptest.TCP(pcaptest.MAC(byte(i)), pcaptest.MAC(1), src, uint16(2000+i), dst, 179, uint32(i), pcaptest.PSH|pcaptest.ACK, make([]byte, 900)))
		}
	}
	return pkts
}

const twentyMB = 20 << 20

// TestBigCaptureWithinBounds: a 20 MB capture is read only up to the
// packet bound, holding at most a few MiB.
func TestBigCaptureWithinBounds(t *testing.T) {
	pkts := mixedPackets()
	for _, tt := range []struct {
		name    string
		opts    pcapsum.Options
		filter  string
		stopped string
		packets int
		whole   bool
	}{
		{"default bound", pcapsum.Options{}, "", pcapsum.StopMaxPackets, 500, false},
		{"largest bound", pcapsum.Options{MaxPackets: 5000}, "", pcapsum.StopMaxPackets, 5000, false},
		{"filter keeps arp", pcapsum.Options{MaxPackets: 5000}, "arp", pcapsum.StopMaxPackets, 5000, false},
		{"filter reads it all", pcapsum.Options{MaxPackets: 5000}, "ospf", pcapsum.StopEnd, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := pcapsum.ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			tt.opts.Filter = f
			probe := newProbe(pcaptest.Stream(pkts, twentyMB))
			s, err := pcapsum.Read(context.Background(), probe, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if s.Stopped != tt.stopped || (tt.packets >= 0 && s.Packets != tt.packets) {
				t.Errorf("stopped %s after %d packets (%d scanned)", s.Stopped, s.Packets, s.Scanned)
			}
			if read := probe.n; tt.whole != (read >= twentyMB) {
				t.Errorf("read %d bytes of %d", read, twentyMB)
			}
			if grew := probe.grew(); grew > 4<<20 {
				t.Errorf("the heap grew by %d KiB while reading", grew>>10)
			}
			t.Logf("%s: %d packets kept of %d, %d bytes read, heap +%d KiB", tt.name, s.Packets, s.Scanned, probe.n, probe.grew()>>10)
		})
	}
}
