package openaiwire

import (
	"encoding/json"
	"strconv"

	"agentchat/internal/jsonstr"
	"agentchat/internal/llm"
)

// ChunkEncoder encodes the chunks of one stream without reflection: the
// bytes encoding/json gives for ChunkHead.Chunk (the role chunk, every
// content and reasoning chunk, the finish chunk) and for the usage chunk. The
// head, prefix and suffix are the same for every chunk of the stream.
type ChunkEncoder struct {
	head   []byte // {"id":...,"object":...,"created":...,"model":...
	prefix []byte // head,"choices":[{"index":0,"delta":{
	suffix []byte // },"logprobs":null,"finish_reason":null}]...}
	usage  bool   // the client asked for the usage chunk ("usage":null elsewhere)
	buf    []byte
}

// NewChunkEncoder returns the encoder of the chunks of h.
func NewChunkEncoder(h ChunkHead) *ChunkEncoder {
	t := &ChunkEncoder{usage: h.IncludeUsage}
	t.head = append(t.head, `{"id":`...)
	t.head = jsonstr.Append(t.head, h.ID)
	t.head = append(t.head, `,"object":"chat.completion.chunk","created":`...)
	t.head = strconv.AppendInt(t.head, h.Created, 10)
	t.head = append(t.head, `,"model":`...)
	t.head = jsonstr.Append(t.head, h.Model)
	t.prefix = append(append(t.prefix, t.head...), `,"choices":[{"index":0,"delta":{`...)
	t.suffix = append(t.suffix, `},"logprobs":null,"finish_reason":null}]`...)
	if h.IncludeUsage {
		t.suffix = append(t.suffix, `,"usage":null`...)
	}
	t.suffix = append(t.suffix, '}')
	return t
}

// Role returns the first chunk of the stream: the assistant role with an
// empty content, in a buffer of its own (it is queued while the chunk
// that opens the stream, in the shared buffer, waits to be sent).
func (t *ChunkEncoder) Role() []byte {
	b := append([]byte(nil), t.prefix...)
	b = append(b, `"role":"assistant","content":""`...)
	return append(b, t.suffix...)
}

// Finish returns the chunk that ends the choice with reason.
func (t *ChunkEncoder) Finish(reason string) []byte {
	b := append(t.buf[:0], t.prefix...)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = jsonstr.Append(b, reason)
	b = append(b, "}]"...)
	if t.usage {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, '}')
	t.buf = b
	return b
}

// UsageChunk returns the last chunk, with the usage and no choice.
func (t *ChunkEncoder) UsageChunk(u Usage) []byte {
	b := append(t.buf[:0], t.head...)
	b = append(b, `,"choices":[],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	if u.CostUSD != "" {
		b = append(b, `,"cost_usd":`...)
		b = append(b, u.CostUSD...)
	}
	b = append(b, "}}"...)
	t.buf = b
	return b
}

// Content returns the chunk of a content delta (valid until the next
// call).
func (t *ChunkEncoder) Content(text string) []byte {
	return t.encode(`"content":`, text)
}

// Reasoning returns the chunk of a reasoning delta (text not empty).
func (t *ChunkEncoder) Reasoning(text string) []byte {
	return t.encode(`"reasoning_content":`, text)
}

func (t *ChunkEncoder) encode(key, text string) []byte {
	b := append(t.buf[:0], t.prefix...)
	b = append(b, key...)
	b = jsonstr.Append(b, text)
	b = append(b, t.suffix...)
	t.buf = b
	return b
}

// ContentLogprobs returns the chunk of a content delta with the log
// probabilities of its tokens (an empty list when the model sent none).
func (t *ChunkEncoder) ContentLogprobs(text string, lp []llm.TokenLogProb) []byte {
	if lp == nil {
		lp = []llm.TokenLogProb{}
	}
	enc, err := json.Marshal(lp)
	if err != nil {
		// Not expected (a NaN logprob): the content without them.
		return t.Content(text)
	}
	b := append(t.buf[:0], t.prefix...)
	b = append(b, `"content":`...)
	b = jsonstr.Append(b, text)
	b = append(b, `},"logprobs":{"content":`...)
	b = append(b, enc...)
	b = append(b, `,"refusal":null},"finish_reason":null}]`...)
	if t.usage {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, '}')
	t.buf = b
	return b
}
