package store

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Deflater compresses with DEFLATE (RFC 1951) at BestSpeed and inflates,
// reusing its compressors (a flate.Writer holds about a megabyte of
// tables) and decompressors (a 32 KB window each). The stores that are
// billed by the byte use it: the turn log's batches (TurnBlobs) and
// DynamoDB's message text. The zero value is ready, and a nil *Deflater
// works with new ones each time; it is safe for concurrent use.
type Deflater struct{ writers, readers sync.Pool }

// AppendDeflate appends b, compressed, to dst and returns the result.
func (d *Deflater) AppendDeflate(dst, b []byte) []byte {
	buf := bytes.NewBuffer(dst)
	var w *flate.Writer
	if d != nil {
		w, _ = d.writers.Get().(*flate.Writer)
	}
	if w == nil {
		w, _ = flate.NewWriter(buf, flate.BestSpeed) // a valid level: no error
	} else {
		w.Reset(buf)
	}
	// Writes to a bytes.Buffer do not fail.
	_, _ = w.Write(b)
	_ = w.Close()
	if d != nil {
		d.writers.Put(w)
	}
	return buf.Bytes()
}

// ErrInflatedTooLarge reports compressed bytes that expand past the bound
// Inflate was given.
var ErrInflatedTooLarge = errors.New("compressed bytes expand past the size limit")

// Inflate returns the bytes that z, compressed by AppendDeflate, holds;
// ErrInflatedTooLarge when they would pass limit bytes.
func (d *Deflater) Inflate(z []byte, limit int) ([]byte, error) {
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
	out.Grow(min(3*len(z), limit))
	_, err := out.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if d != nil {
		d.readers.Put(r)
	}
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if out.Len() > limit {
		return nil, ErrInflatedTooLarge
	}
	return out.Bytes(), nil
}
