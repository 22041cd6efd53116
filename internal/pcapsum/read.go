package pcapsum

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// maxSnaplen bounds the buffer of one packet, whatever the stream's
// header claims (a crafted snap length would otherwise size it).
const maxSnaplen = 256 << 10

// ErrNotPcap is the error of a stream that does not start with a pcap
// header (pcapng is not supported; GNS3 writes pcap).
var ErrNotPcap = errors.New("not a pcap stream")

// Read sums up the pcap stream r (the classic libpcap format, with
// microsecond or nanosecond timestamps, in either byte order, maybe
// gzipped), one packet at a time, until it ends, ctx ends (Stopped:
// StopContext; the caller closes r or cancels the request under it to
// end a blocked read), the bounds of o are reached, or the stream turns
// corrupt. Only a stream that is not pcap at all is an error; a context
// that ends before the header is a summary of no packets.
func Read(ctx context.Context, r io.Reader, o Options) (Summary, error) {
	pr, err := newPcapReader(r, maxSnaplen)
	if err != nil {
		if ctx.Err() != nil {
			return Summary{Stopped: StopContext, Protocols: map[string]int{}, Findings: []string{}, Conversations: []Conversation{}, FirstPackets: []string{}}, nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Summary{Stopped: StopEnd, Protocols: map[string]int{}, Findings: []string{}, Conversations: []Conversation{}, FirstPackets: []string{}}, nil
		}
		return Summary{}, fmt.Errorf("%w: %v", ErrNotPcap, err)
	}
	a := New(pr.linkType, o)
	stopped := ""
	for stopped == "" {
		if ctx.Err() != nil {
			stopped = StopContext
			break
		}
		data, pi, err := pr.next()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			stopped = StopContext
			continue
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			stopped = StopEnd
			continue
		default:
			stopped = StopCorrupt
			continue
		}
		a.Add(pi, data)
		if full, why := a.Full(); full {
			stopped = why
		}
	}
	s := a.Summary()
	s.Stopped = stopped
	return s, nil
}
