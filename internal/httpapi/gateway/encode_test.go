package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

var jsonStringSamples = []string{
	"", "plain", " world", `quote " and \ backslash`, "line\nbreak\r\ttab\b\f",
	"\x00\x01\x1f\x7f", "<b>&amp;</b>", "café 你好 😀", "\u2028 and \u2029",
	"bad \xff utf8 \xe2\x82", "chatcmpl-ABC_123", "日本語\n```go\nfmt.Println(\"x\")\n```",
}

// TestTokenChunksMatchEncodingJSON: the hand-encoded chunks are the bytes
// encoding/json gives for the same chunk.
func TestTokenChunksMatchEncodingJSON(t *testing.T) {
	for _, usage := range []bool{false, true} {
		for _, model := range []string{"naked", "gpt-<4>"} {
			cs := &completionStream{id: "chatcmpl-x&y", created: 1700000000, model: model, includeUsage: usage}
			tc := newTokenChunks(cs.id, cs.created, cs.model, cs.includeUsage)
			for _, s := range jsonStringSamples {
				want, _ := json.Marshal(cs.chunk(delta{Content: &s}, nil))
				if got := tc.content(s); !bytes.Equal(got, want) {
					t.Errorf("content %q:\n got %s\nwant %s", s, got, want)
				}
				if s == "" {
					continue // reasoning is never empty
				}
				want, _ = json.Marshal(cs.chunk(delta{ReasoningContent: s}, nil))
				if got := tc.reasoning(s); !bytes.Equal(got, want) {
					t.Errorf("reasoning %q:\n got %s\nwant %s", s, got, want)
				}
			}
		}
	}
}

func BenchmarkContentChunk(b *testing.B) {
	cs := &completionStream{id: "chatcmpl-abcdefghijklmnop", created: 1700000000, model: "naked", includeUsage: true}
	text := " linked"
	b.Run("hand", func(b *testing.B) {
		tc := newTokenChunks(cs.id, cs.created, cs.model, cs.includeUsage)
		b.ReportAllocs()
		for b.Loop() {
			_ = tc.content(text)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(cs.chunk(delta{Content: &text}, nil))
		}
	})
}
