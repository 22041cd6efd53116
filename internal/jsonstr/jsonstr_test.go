package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// samples are strings that exercise every escape of Append.
var samples = []string{
	"", "plain", " world", `quote " and \ backslash`, "line\nbreak\r\ttab\b\f",
	"\x00\x01\x1f\x7f", "<b>&amp;</b>", "café 你好 😀", "\u2028 and \u2029",
	"bad \xff utf8 \xe2\x82", "chatcmpl-ABC_123", "日本語\n```go\nfmt.Println(\"x\")\n```",
	"\xff\xfe", "\xed\xa0\x80", "<>&'\"\\/", "\U0010ffff", allBytes(),
}

// allBytes is every byte value once, in order.
func allBytes() string {
	var b strings.Builder
	for c := range 256 {
		b.WriteByte(byte(c))
	}
	return b.String()
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// TestAppendEveryLane: every byte value, and runes of 2 to 4 bytes, at
// every offset of a 24-byte safe text, so that the eight-byte fast path
// meets each in each of its lanes and across a word's end.
func TestAppendEveryLane(t *testing.T) {
	const base = "abcdefghijklmnopqrstuvwx"
	check := func(s string) {
		t.Helper()
		want, _ := json.Marshal(s)
		if got := Append(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	for i := range len(base) {
		for c := range 256 {
			check(base[:i] + string([]byte{byte(c)}) + base[i+1:])
		}
		for _, r := range []string{"é", "你", "😀", "\u2028", "\xe2\x82"} {
			check(base[:i] + r + base[i:])
		}
	}
}

// BenchmarkAppend: prose with line breaks (a system prompt, an answer)
// and text that is mostly multi-byte UTF-8.
func BenchmarkAppend(b *testing.B) {
	prose := strings.Repeat("You are a network copilot for a GNS3 lab. Check the routes before you change them,\n"+
		"and say which device you act on: R1, R2 or the switch (\"SW1\").\n", 24)
	for _, c := range []struct{ name, s string }{
		{"prose", prose},
		{"cjk", strings.Repeat("日本語のテキストと English words 混在。\n", 60)},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(c.s))
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = Append(buf[:0], c.s)
			}
		})
	}
}
