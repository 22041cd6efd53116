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
