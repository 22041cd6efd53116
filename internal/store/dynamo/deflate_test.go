package dynamo

import (
	"bytes"
	"compress/flate"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

// randomText is n printable ASCII characters drawn at random, which
// DEFLATE shrinks by a fifth at most.
func randomText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(' ' + r.IntN(95))
	}
	return string(b)
}

// randomBytes is n random bytes, which DEFLATE cannot shrink.
func randomBytes(n int) string {
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// itemSize is the size DynamoDB bills an item by: each attribute's name
// and value in bytes (numbers counted by their digits, a close bound).
func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value)
		default:
			n++
		}
	}
	return n
}

func TestCompress(t *testing.T) {
	d := &store.Deflater{}
	cases := []struct {
		name  string
		in    string
		wantZ bool
	}{
		{"empty", "", false},
		{"short text", "show ip route", false},
		{"a user's question", storetest.Question1KiB, true},
		{"console output", strings.Repeat("Gi0/1  up  up  10.0.12.1/30\n", 200), true},
		{"incompressible", randomBytes(4096), false},
	}
	for _, tc := range cases {
		z := compressMessage(d, []byte(tc.in))
		if (z != nil) != tc.wantZ {
			t.Errorf("%s: compressed %v, want %v", tc.name, z != nil, tc.wantZ)
			continue
		}
		if z == nil {
			continue
		}
		if len(z) > len(tc.in)*9/10 {
			t.Errorf("%s: %d bytes compressed to %d", tc.name, len(tc.in), len(z))
		}
		back, err := inflateMessage(d, z)
		if err != nil || string(back) != tc.in {
			t.Errorf("%s: inflate: %v (%d bytes back of %d)", tc.name, err, len(back), len(tc.in))
		}
		// A nil *store.Deflater (no pool) compresses the same way.
		if z2 := compressMessage(nil, []byte(tc.in)); !bytes.Equal(z, z2) {
			t.Errorf("%s: a nil deflaters compressed differently", tc.name)
		}
	}
}

func TestInflateRefuses(t *testing.T) {
	var bomb bytes.Buffer
	w, _ := flate.NewWriter(&bomb, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	for range maxInflated>>20 + 1 {
		_, _ = w.Write(zeros)
	}
	_ = w.Close()
	for _, tc := range []struct {
		name string
		z    []byte
		want error
	}{
		{"expands past the limit", bomb.Bytes(), store.ErrInflatedTooLarge},
		{"not DEFLATE", []byte("plain text, not compressed"), nil},
	} {
		_, err := inflateMessage(nil, tc.z)
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// A message item holds its text compressed when that makes it smaller: a
// 1 KiB storetest.Question1KiB then bills one write unit (1 KB) instead of two; an item
// written before compression, with its text in content, reads as before.
func TestMessageItemCompressed(t *testing.T) {
	pk := sessionPK("p", "t")
	msg := func(content string) store.Message {
		return store.Message{Seq: 1, ID: "5a0c39a4-8ce3-4f0a-9a1a-3c1d1c3f4f2e", Role: store.RoleUser, Content: content, CreatedAt: now(),
			Metadata: map[string]any{store.MetadataTurnID: "019ae0a1-8f1e-7c3b-9c1e-0d6f1e2a3b4c"}}
	}
	d := &store.Deflater{}
	for _, tc := range []struct {
		name     string
		content  string
		wantZ    bool
		maxBytes int
	}{
		{"1 KiB question", storetest.Question1KiB, true, 1024},
		{"short answer", "OSPF on R3 filters 10.3.0.0/24.", false, 1024},
		{"random text, a fifth smaller", randomText(2000), true, 0},
	} {
		items, err := messageItems(d, pk, "epoch-1", "w", msg(tc.content))
		if err != nil || len(items) != 1 {
			t.Fatalf("%s: %d items, %v", tc.name, len(items), err)
		}
		it := items[0]
		if _, z := it[mContentZ]; z != tc.wantZ {
			t.Errorf("%s: content_z present %v, want %v", tc.name, z, tc.wantZ)
		}
		if tc.maxBytes > 0 && itemSize(it) > tc.maxBytes {
			t.Errorf("%s: item of %d bytes, want at most %d (one write unit)", tc.name, itemSize(it), tc.maxBytes)
		}
		got, err := decodeMessage(d, 1, it, nil)
		if err != nil || got.Content != tc.content {
			t.Errorf("%s: decoded %q, %v", tc.name, got.Content, err)
		}
	}
	// As written before compression.
	legacy, _ := messageItems(nil, pk, "epoch-1", "w", msg("short"))
	legacy[0][mContent] = avS(storetest.Question1KiB)
	if got, err := decodeMessage(d, 1, legacy[0], nil); err != nil || got.Content != storetest.Question1KiB {
		t.Errorf("an uncompressed item: %q, %v", got.Content, err)
	}
}
