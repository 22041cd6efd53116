package pcaptest

import (
	"encoding/binary"
	"io"
)

// Stream returns a reader of an Ethernet pcap stream of about size
// bytes: the header, then packets cycling through pkts, generated as it
// is read (the stream is never held whole in memory).
func Stream(pkts [][]byte, size int64) io.Reader {
	return &stream{pkts: pkts, left: size, pending: header()}
}

func header() []byte {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h[0:4], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:6], 2)
	binary.LittleEndian.PutUint16(h[6:8], 4)
	binary.LittleEndian.PutUint32(h[16:20], 65536)
	binary.LittleEndian.PutUint32(h[20:24], 1)
	return h
}

type stream struct {
	pkts    [][]byte
	i       int
	left    int64
	pending []byte
	rec     []byte
}

func (s *stream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.pending) == 0 {
			if s.left <= 0 {
				break
			}
			pkt := s.pkts[s.i%len(s.pkts)]
			ts := Start.Add(0).Unix() + int64(s.i/100)
			s.rec = s.rec[:0]
			s.rec = binary.LittleEndian.AppendUint32(s.rec, uint32(ts))
			s.rec = binary.LittleEndian.AppendUint32(s.rec, uint32(s.i%100*10000))
			s.rec = binary.LittleEndian.AppendUint32(s.rec, uint32(len(pkt)))
			s.rec = binary.LittleEndian.AppendUint32(s.rec, uint32(len(pkt)))
			s.rec = append(s.rec, pkt...)
			s.pending = s.rec
			s.left -= int64(len(s.rec))
			s.i++
		}
		c := copy(p[n:], s.pending)
		s.pending = s.pending[c:]
		n += c
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
