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

// TestOtherChunksMatchEncodingJSON: the role, finish and usage chunks are
// the bytes encoding/json gives for them.
func TestOtherChunksMatchEncodingJSON(t *testing.T) {
	for _, usage := range []bool{false, true} {
		cs := &completionStream{id: "chatcmpl-<id>", created: 1700000000, model: "gpt-\u2028x", includeUsage: usage}
		tc := newTokenChunks(cs.id, cs.created, cs.model, cs.includeUsage)
		empty := ""
		want, _ := json.Marshal(cs.chunk(delta{Role: "assistant", Content: &empty}, nil))
		if got := tc.role(); !bytes.Equal(got, want) {
			t.Errorf("role (usage %v):\n got %s\nwant %s", usage, got, want)
		}
		for _, reason := range []string{"stop", "length", "tool_calls", "content_filter", `odd "reason" <&>`} {
			want, _ := json.Marshal(cs.chunk(delta{}, &reason))
			if got := tc.finish(reason); !bytes.Equal(got, want) {
				t.Errorf("finish %q (usage %v):\n got %s\nwant %s", reason, usage, got, want)
			}
		}
		for _, u := range []Usage{{}, {PromptTokens: 42, CompletionTokens: 20, TotalTokens: 62}, {PromptTokens: 1 << 40}} {
			raw, _ := json.Marshal(u)
			want, _ := json.Marshal(chunk{ID: cs.id, Object: "chat.completion.chunk", Created: cs.created, Model: cs.model,
				Choices: []chunkChoice{}, Usage: raw})
			if got := tc.usageChunk(u); !bytes.Equal(got, want) {
				t.Errorf("usage %+v:\n got %s\nwant %s", u, got, want)
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
