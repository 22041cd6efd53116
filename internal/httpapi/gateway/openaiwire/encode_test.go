package openaiwire

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
			cs := ChunkHead{ID: "chatcmpl-x&y", Created: 1700000000, Model: model, IncludeUsage: usage}
			tc := NewChunkEncoder(cs)
			for _, s := range jsonStringSamples {
				want, _ := json.Marshal(cs.Chunk(Delta{Content: &s}, nil))
				if got := tc.Content(s); !bytes.Equal(got, want) {
					t.Errorf("content %q:\n got %s\nwant %s", s, got, want)
				}
				if s == "" {
					continue // reasoning is never empty
				}
				want, _ = json.Marshal(cs.Chunk(Delta{ReasoningContent: s}, nil))
				if got := tc.Reasoning(s); !bytes.Equal(got, want) {
					t.Errorf("reasoning %q:\n got %s\nwant %s", s, got, want)
				}
			}
		}
	}
}

// TestOtherChunksMatchEncodingJSON: the role, finish and usage chunks are
// the bytes encoding/json gives for them.
func TestOtherChunksMatchEncodingJSON(t *testing.T) {
	for _, usage := range []bool{false, true} {
		cs := ChunkHead{ID: "chatcmpl-<id>", Created: 1700000000, Model: "gpt-\u2028x", IncludeUsage: usage}
		tc := NewChunkEncoder(cs)
		empty := ""
		want, _ := json.Marshal(cs.Chunk(Delta{Role: "assistant", Content: &empty}, nil))
		if got := tc.Role(); !bytes.Equal(got, want) {
			t.Errorf("role (usage %v):\n got %s\nwant %s", usage, got, want)
		}
		for _, reason := range []string{"stop", "length", "tool_calls", "content_filter", `odd "reason" <&>`} {
			want, _ := json.Marshal(cs.Chunk(Delta{}, &reason))
			if got := tc.Finish(reason); !bytes.Equal(got, want) {
				t.Errorf("finish %q (usage %v):\n got %s\nwant %s", reason, usage, got, want)
			}
		}
		for _, u := range []Usage{{}, {PromptTokens: 42, CompletionTokens: 20, TotalTokens: 62}, {PromptTokens: 1 << 40}} {
			raw, _ := json.Marshal(u)
			want, _ := json.Marshal(Chunk{ID: cs.ID, Object: "chat.completion.chunk", Created: cs.Created, Model: cs.Model,
				Choices: []ChunkChoice{}, Usage: raw})
			if got := tc.UsageChunk(u); !bytes.Equal(got, want) {
				t.Errorf("usage %+v:\n got %s\nwant %s", u, got, want)
			}
		}
	}
}

func BenchmarkContentChunk(b *testing.B) {
	cs := ChunkHead{ID: "chatcmpl-abcdefghijklmnop", Created: 1700000000, Model: "naked", IncludeUsage: true}
	text := " linked"
	b.Run("hand", func(b *testing.B) {
		tc := NewChunkEncoder(cs)
		b.ReportAllocs()
		for b.Loop() {
			_ = tc.Content(text)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(cs.Chunk(Delta{Content: &text}, nil))
		}
	})
}
