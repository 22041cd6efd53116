package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// CheckTurnEvents validates a batch given to TurnLogs.AppendTurnEvents and
// returns the number of its last event: First+len(Events)-1, which is
// First-1 for a batch without events (0 for the marker batch of a turn).
func CheckTurnEvents(ev TurnEvents, keep time.Duration) (last int64, err error) {
	switch {
	case ev.Turn == "":
		return 0, errors.New("empty turn id")
	case ev.First < 1:
		return 0, fmt.Errorf("turn %s: first event number %d is below 1", ev.Turn, ev.First)
	case keep <= 0:
		return 0, fmt.Errorf("turn %s: keep %v is not positive", ev.Turn, keep)
	}
	return ev.First + int64(len(ev.Events)) - 1, nil
}

// EncodeTurnEvents returns the events as one blob, each as its length
// (an unsigned varint) followed by its bytes, the form in which the
// stores keep a batch of a turn's log. An empty batch is an empty blob.
func EncodeTurnEvents(events [][]byte) []byte {
	size := 0
	for _, e := range events {
		size += binary.MaxVarintLen64 + len(e)
	}
	b := make([]byte, 0, size)
	for _, e := range events {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b
}

// DecodeTurnEvents splits a blob written by EncodeTurnEvents into its n
// events, which share b's memory (an empty event is an empty, non-nil
// slice). It is an error when b does not hold exactly n events.
func DecodeTurnEvents(b []byte, n int64) ([][]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("decode turn events: negative count %d", n)
	}
	events := make([][]byte, 0, min(n, int64(len(b))+1))
	for int64(len(events)) < n {
		size, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, fmt.Errorf("decode turn events: bad length of event %d of %d", len(events)+1, n)
		}
		b = b[w:]
		if size > uint64(len(b)) {
			return nil, fmt.Errorf("decode turn events: event %d of %d is cut (%d bytes of %d)", len(events)+1, n, len(b), size)
		}
		events = append(events, b[:size:size])
		b = b[size:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("decode turn events: %d bytes after the %d events", len(b), n)
	}
	return events, nil
}

// TakeTurnEvents appends to dst the events of a stored batch that are
// numbered from next on, first being the number of events[0], while the
// bytes of dst stay within MaxTurnEventsRead (dst always gets at least
// one event when one is available). size is the byte count of dst. It
// returns the new dst and size and whether the batch was taken whole
// (false: the limit cut it).
func TakeTurnEvents(dst [][]byte, size int, events [][]byte, first, next int64) ([][]byte, int, bool) {
	for i := max(next-first, 0); i < int64(len(events)); i++ {
		e := events[i]
		if len(dst) > 0 && size+len(e) > MaxTurnEventsRead {
			return dst, size, false
		}
		dst = append(dst, e)
		size += len(e)
	}
	return dst, size, true
}
