package dynamo

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Message compression. DynamoDB bills a write by the kilobyte of the
// item and a read by 4 KB of the items read, and it counts attribute
// values byte for byte. A message's text, a device's console output
// above all, compresses to a third or less with DEFLATE, so a message
// item stores it compressed (content_z, binary) when it is at least
// compressFrom bytes and the compressed form is at least a tenth smaller;
// a large message's JSON body, cut into part items, likewise
// (body_deflate marks it). Readers take either form, so items written
// before compression read as they did.

// compressFrom is the smallest text worth compressing: below it an item
// seldom crosses a kilobyte boundary by its text alone.
const compressFrom = 256

// maxInflated bounds what a compressed value may expand to: a message
// body's size limit (the API's) with room to spare.
const maxInflated = 64 << 20

// deflaters compresses with DEFLATE (RFC 1951) at BestSpeed and
// decompresses, reusing its compressors (a flate.Writer holds about a
// megabyte of tables) and decompressors (a 32 KB window each: a history of
// 200 messages would otherwise allocate 8 MB to read). The zero value is
// ready, and a nil *deflaters works with new ones each time; it is safe
// for concurrent use.
type deflaters struct{ writers, readers sync.Pool }

// compress returns b compressed, or nil when that does not save a tenth
// of it (or b is shorter than compressFrom).
func (d *deflaters) compress(b []byte) []byte {
	if len(b) < compressFrom {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(len(b) / 2)
	var w *flate.Writer
	if d != nil {
		w, _ = d.writers.Get().(*flate.Writer)
	}
	if w == nil {
		w, _ = flate.NewWriter(&buf, flate.BestSpeed) // a valid level: no error
	} else {
		w.Reset(&buf)
	}
	// Writes to a bytes.Buffer do not fail.
	_, _ = w.Write(b)
	_ = w.Close()
	if d != nil {
		d.writers.Put(w)
	}
	if buf.Len() > len(b)-len(b)/10 {
		return nil
	}
	return buf.Bytes()
}

// errInflatedTooLarge reports a compressed value that expands past
// maxInflated.
var errInflatedTooLarge = errors.New("compressed value expands past the size limit")

// inflate returns the bytes that z, compressed by compress, holds.
func (d *deflaters) inflate(z []byte) ([]byte, error) {
	var r io.ReadCloser
	if d != nil {
		r, _ = d.readers.Get().(io.ReadCloser)
	}
	if r == nil {
		r = flate.NewReader(bytes.NewReader(z))
	} else if err := r.(flate.Resetter).Reset(bytes.NewReader(z), nil); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	var out bytes.Buffer
	out.Grow(3 * len(z))
	_, err := out.ReadFrom(io.LimitReader(r, maxInflated+1))
	if d != nil {
		d.readers.Put(r)
	}
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if out.Len() > maxInflated {
		return nil, errInflatedTooLarge
	}
	return out.Bytes(), nil
}
