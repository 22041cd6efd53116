package llm

import (
	"encoding/json"
	"reflect"
	"testing"
)

// chunkSamples are data lines as servers send them, and tricky ones.
var chunkSamples = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"x","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
	`{"id":"x","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"line\nnext \"q\" \\ \/ \t\r\b\f"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \u4f60\u597d \ud83d\ude00"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"lone \ud83d end"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"raw café 你好 😀"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
	`{"choices":[{"index":0,"delta":{"Content":"folded key"}}]}`,
	`{"CHOICES":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"a"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"delta":{"refusal":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"delta":{}}]}`,
	`{"model":"a","model":null,"choices":null}`,
	`{"choices":[null,{"index":0}]}`,
	`{"choices":[{"index":1.0}]}`,
	`{"choices":[{"index":-3}]}`,
	`{"choices":[{"index":01}]}`,
	`{"choices":[{"index":"0"}]}`,
	`{"choices":[{"index":0,"finish_reason":5}]}`,
	`{"x":[1,-2.5e+3,true,false,null,{"a":{"b":[[]]}},"s\u0041"],"choices":[]}`,
	` { "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } } ] } `,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]} trailing`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}},]}`,
	`{"a":1,}`,
	`null`,
	`{}`,
	`[]`,
	``,
	`{"e\u0078tra":1,"choices":[]}`,
	`{"x":-}`,
	`{"x":1.}`,
	`{"x":1e}`,
	`{"x":"ctl` + "\x01" + `"}`,
}

// equivalent checks that decodeFast, when it accepts raw, decodes what
// encoding/json decodes.
func equivalent(t *testing.T, raw []byte) bool {
	t.Helper()
	var fast, slow streamChunk
	ok := decodeFast(raw, &fast)
	err := json.Unmarshal(raw, &slow)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("the fast path accepted %q, which encoding/json refuses: %v", raw, err)
	}
	fast.lastModel = "" // decodeFast's own memory, not a decoded field
	if len(fast.Choices) == 0 {
		fast.Choices = nil
	}
	if len(slow.Choices) == 0 {
		slow.Choices = nil
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast %+v\njson %+v", raw, fast, slow)
	}
	return true
}

func TestDecodeFastMatchesEncodingJSON(t *testing.T) {
	for _, s := range chunkSamples {
		equivalent(t, []byte(s))
	}
}

// TestDecodeFastTakesTheUsualChunks: the chunks of a plain answer do not
// fall back to reflection; tool calls and usage objects do.
func TestDecodeFastTakesTheUsualChunks(t *testing.T) {
	for i, want := range []bool{true, true, true, false, false, true, true, true, false, true, false, false, false} {
		var c streamChunk
		if got := decodeFast([]byte(chunkSamples[i]), &c); got != want {
			t.Errorf("decodeFast(%s) = %v, want %v", chunkSamples[i], got, want)
		}
	}
	// Through decode, every sample that encoding/json accepts decodes.
	var c streamChunk
	for _, s := range chunkSamples {
		var ref streamChunk
		if json.Unmarshal([]byte(s), &ref) != nil {
			continue
		}
		if err := c.decode([]byte(s)); err != nil {
			t.Errorf("decode(%s): %v", s, err)
		}
	}
}

// TestDecodeReusesTheModel: the chunks of a stream repeat the model name
// and the fields nobody reads (id, object, system_fingerprint): a content
// chunk after the first costs one allocation, its content, and a new model
// name is still read as it is.
func TestDecodeReusesTheModel(t *testing.T) {
	var c streamChunk
	first := []byte(chunkSamples[0])
	next := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`)
	if err := c.decode(first); err != nil || c.Model != "gpt-4o-mini" {
		t.Fatalf("first chunk: model %q, %v", c.Model, err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.decode(next); err != nil || c.Model != "gpt-4o-mini" || c.Choices[0].Delta.Content != " world" {
			t.Fatalf("next chunk: %+v, %v", c, err)
		}
	})
	if allocs > 1 {
		t.Errorf("a content chunk costs %.0f allocations, want 1 (its content)", allocs)
	}
	for _, model := range []string{"other-model", "gpt-4o-mini", `esc\"aped \u00e9`} {
		raw := []byte(`{"model":"` + model + `","choices":[{"index":0,"delta":{"content":"x"}}]}`)
		var want streamChunk
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := c.decode(raw); err != nil || c.Model != want.Model {
			t.Errorf("model %s: decoded %q, want %q (%v)", model, c.Model, want.Model, err)
		}
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, s := range chunkSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		equivalent(t, raw)
	})
}

func BenchmarkChunkDecode(b *testing.B) {
	raw := []byte(chunkSamples[1])
	b.Run("fast", func(b *testing.B) {
		var c streamChunk
		b.ReportAllocs()
		for b.Loop() {
			_ = c.decode(raw)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var c streamChunk
		b.ReportAllocs()
		for b.Loop() {
			c.reset()
			_ = json.Unmarshal(raw, &c)
		}
	})
}
