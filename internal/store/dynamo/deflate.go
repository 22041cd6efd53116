package dynamo

import "agentchat/internal/store"

// Message compression. DynamoDB bills a write by the kilobyte of the
// item and a read by 4 KB of the items read, and it counts attribute
// values byte for byte. A message's text, a device's console output
// above all, compresses to a third or less with DEFLATE, so a message
// item stores it compressed (content_z, binary) when it is at least
// compressFrom bytes and the compressed form is at least a tenth smaller;
// a large message's JSON body, cut into part items, likewise
// (body_deflate marks it), with the Store's store.Deflater. Readers take
// either form, so items written before compression read as they did.

// compressFrom is the smallest text worth compressing: below it an item
// seldom crosses a kilobyte boundary by its text alone.
const compressFrom = 256

// maxInflated bounds what a compressed value may expand to: a message
// body's size limit (the API's) with room to spare.
const maxInflated = 64 << 20

// compressMessage returns b (a message's text or large body) compressed
// with z, or nil when that does not save a tenth of it (or b is shorter
// than compressFrom).
func compressMessage(z *store.Deflater, b []byte) []byte {
	if len(b) < compressFrom {
		return nil
	}
	c := z.AppendDeflate(make([]byte, 0, len(b)/2), b)
	if len(c) > len(b)-len(b)/10 {
		return nil
	}
	return c
}

// inflateMessage returns the bytes that compressMessage compressed into
// c, at most maxInflated of them.
func inflateMessage(z *store.Deflater, c []byte) ([]byte, error) {
	return z.Inflate(c, maxInflated)
}
