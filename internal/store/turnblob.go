package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// Turn log blobs. A batch of a turn's log is kept as one blob: empty for
// a batch without events, else a tag byte and the events, each as its
// length (an unsigned varint) followed by its bytes. Tag blobRaw: that
// sequence as it is; tag blobDeflate: its length (an unsigned varint)
// and the sequence compressed with DEFLATE (RFC 1951). The events of a
// stream repeat themselves (the same session and message ids, the same
// JSON keys in every token's event): compressed, a batch of 64 token
// events is about a tenth of its size, and a DynamoDB write is billed by
// the kilobyte.
const (
	blobRaw     = 0
	blobDeflate = 1
	// blobCompressFrom is the smallest sequence worth compressing.
	blobCompressFrom = 256
	// maxBlobEvents bounds the bytes a compressed blob may expand to.
	maxBlobEvents = 256 << 20
)

// TurnBlobs encodes the blobs of turn log batches, compressed when that
// makes them smaller, reusing its compressors. The zero value is ready;
// it is safe for concurrent use.
type TurnBlobs struct{ z Deflater }

// Encode returns the blob of a batch of events (see DecodeTurnEvents),
// compressed when that makes it smaller.
func (t *TurnBlobs) Encode(events [][]byte) []byte {
	raw := EncodeRawTurnEvents(events)
	if len(raw)-1 < blobCompressFrom {
		return raw
	}
	head := make([]byte, 0, 1+binary.MaxVarintLen64+len(raw)/4)
	head = binary.AppendUvarint(append(head, blobDeflate), uint64(len(raw)-1))
	blob := t.z.AppendDeflate(head, raw[1:])
	if len(blob) >= len(raw) {
		return raw
	}
	return blob
}

// EncodeTurnEvents is TurnBlobs.Encode with a compressor of its own.
func EncodeTurnEvents(events [][]byte) []byte {
	var t TurnBlobs
	return t.Encode(events)
}

// EncodeRawTurnEvents returns the blob of a batch of events, not
// compressed: for a store whose writes are not billed by the byte, where
// compressing would only cost CPU (on the local server, 2.5 % of a
// streamed turn's).
func EncodeRawTurnEvents(events [][]byte) []byte {
	if len(events) == 0 {
		return []byte{}
	}
	return appendEventSeq([]byte{blobRaw}, events)
}

// appendEventSeq appends each event as its length and its bytes.
func appendEventSeq(b []byte, events [][]byte) []byte {
	for _, e := range events {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b
}

// DecodeTurnEvents splits a blob written by TurnBlobs.Encode into its n
// events (an empty event is an empty, non-nil slice; the events of an
// uncompressed blob share b's memory). It is an error when b does not
// hold exactly n events.
func DecodeTurnEvents(b []byte, n int64) ([][]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("decode turn events: negative count %d", n)
	}
	if len(b) == 0 {
		if n != 0 {
			return nil, fmt.Errorf("decode turn events: an empty blob holds no event, want %d", n)
		}
		return [][]byte{}, nil
	}
	switch b[0] {
	case blobRaw:
		b = b[1:]
	case blobDeflate:
		size, w := binary.Uvarint(b[1:])
		if w <= 0 || size > maxBlobEvents {
			return nil, errors.New("decode turn events: bad length of the compressed events")
		}
		raw := make([]byte, size)
		r := flate.NewReader(bytes.NewReader(b[1+w:]))
		if _, err := io.ReadFull(r, raw); err != nil {
			return nil, fmt.Errorf("decode turn events: inflate: %w", err)
		}
		// The stream must end right there, cleanly.
		if k, err := r.Read(make([]byte, 1)); k != 0 || err != io.EOF {
			return nil, fmt.Errorf("decode turn events: the compressed events do not end as announced (%d more bytes, %v)", k, err)
		}
		b = raw
	default:
		return nil, fmt.Errorf("decode turn events: unknown blob tag %d", b[0])
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
