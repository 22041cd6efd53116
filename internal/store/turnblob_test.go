package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestTurnEventsBlob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events [][]byte
	}{
		{"none", nil},
		{"one", [][]byte{[]byte(`{"a":1}`)}},
		{"empty events", [][]byte{{}, []byte("x"), {}}},
		{"long length", [][]byte{bytes.Repeat([]byte("y"), 300)}},
		{"token events, compressed", tokenEvents(64)},
		{"random bytes, kept raw", [][]byte{randomBytes(4096)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := EncodeTurnEvents(tc.events)
			got, err := DecodeTurnEvents(b, int64(len(tc.events)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(got) != len(tc.events) {
				t.Fatalf("%d events, want %d", len(got), len(tc.events))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.events[i]) || got[i] == nil {
					t.Errorf("event %d = %q, want %q (non-nil)", i, got[i], tc.events[i])
				}
			}
			if len(tc.events) > 0 {
				for _, cut := range []int{1, len(b) / 2, len(b) - 1} {
					if _, err := DecodeTurnEvents(b[:cut], int64(len(tc.events))); err == nil {
						t.Errorf("decode of the first %d of %d bytes: no error", cut, len(b))
					}
				}
			}
			if _, err := DecodeTurnEvents(b, int64(len(tc.events))+1); err == nil {
				t.Errorf("decode of one event more than written: no error")
			}
			if len(tc.events) > 0 {
				if _, err := DecodeTurnEvents(b, int64(len(tc.events))-1); err == nil {
					t.Errorf("decode of one event less than written: no error")
				}
			}
		})
	}
}

// tokenEvents are n content events of one stream, as the project chat
// writes them.
func tokenEvents(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"type":"content","content":" word%d","message_id":"6f1c9a52-3a8e-4b1e-9d0c-2b7e5f6a8c41","session_id":"0b9d2c7e-51f4-4e8a-a3c6-9f2d1e7b4a60"}`, i)
	}
	return out
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestTurnBlobCompression: a batch of token events is stored compressed,
// at most a fifth of its size; incompressible events are stored as they
// are; one TurnBlobs used at once by many goroutines encodes each batch
// right.
func TestTurnBlobCompression(t *testing.T) {
	evs := tokenEvents(64)
	raw := appendEventSeq([]byte{blobRaw}, evs)
	var blobs TurnBlobs
	b := blobs.Encode(evs)
	if b[0] != blobDeflate || len(b)*5 > len(raw) {
		t.Fatalf("64 token events: tag %d, %d bytes for %d raw", b[0], len(b), len(raw))
	}
	if r := blobs.Encode([][]byte{randomBytes(4096)}); r[0] != blobRaw {
		t.Fatalf("random bytes stored with tag %d", r[0])
	}
	if r := EncodeRawTurnEvents(evs); r[0] != blobRaw || len(r) != len(raw) {
		t.Fatalf("a raw encoding: tag %d, %d bytes, want %d", r[0], len(r), len(raw))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				evs := tokenEvents(1 + (g*50+i)%100)
				got, err := DecodeTurnEvents(blobs.Encode(evs), int64(len(evs)))
				if err != nil || len(got) != len(evs) || !bytes.Equal(got[len(got)-1], evs[len(evs)-1]) {
					t.Errorf("goroutine %d, batch %d: %v", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := DecodeTurnEvents([]byte{7, 1, 2}, 1); err == nil {
		t.Error("an unknown tag decoded")
	}
}

func TestTakeTurnEvents(t *testing.T) {
	small, large := []byte("s"), make([]byte, MaxTurnEventsRead)
	for _, tc := range []struct {
		name        string
		events      [][]byte
		first, next int64
		want        int
		whole       bool
	}{
		{"all", [][]byte{small, small, small}, 1, 1, 3, true},
		{"from the middle", [][]byte{small, small, small}, 1, 3, 1, true},
		{"one large", [][]byte{large, small}, 5, 5, 1, false},
		{"small then large", [][]byte{small, large}, 1, 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, whole := TakeTurnEvents(nil, 0, tc.events, tc.first, tc.next)
			if len(got) != tc.want || whole != tc.whole {
				t.Errorf("%d events, whole %v; want %d, %v", len(got), whole, tc.want, tc.whole)
			}
		})
	}
}
