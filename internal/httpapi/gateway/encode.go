package gateway

import (
	"strconv"

	"agentchat/internal/jsonstr"
)

// tokenChunks encodes the content and reasoning chunks of one stream
// without reflection: the bytes encoding/json gives for cs.chunk (the
// prefix and suffix are the same for every chunk of the stream).
type tokenChunks struct {
	prefix []byte // {"id":...,"choices":[{"index":0,"delta":{
	suffix []byte // },"logprobs":null,"finish_reason":null}]...}
	buf    []byte
}

func newTokenChunks(id string, created int64, model string, includeUsage bool) *tokenChunks {
	t := &tokenChunks{}
	t.prefix = append(t.prefix, `{"id":`...)
	t.prefix = jsonstr.Append(t.prefix, id)
	t.prefix = append(t.prefix, `,"object":"chat.completion.chunk","created":`...)
	t.prefix = strconv.AppendInt(t.prefix, created, 10)
	t.prefix = append(t.prefix, `,"model":`...)
	t.prefix = jsonstr.Append(t.prefix, model)
	t.prefix = append(t.prefix, `,"choices":[{"index":0,"delta":{`...)
	t.suffix = append(t.suffix, `},"logprobs":null,"finish_reason":null}]`...)
	if includeUsage {
		t.suffix = append(t.suffix, `,"usage":null`...)
	}
	t.suffix = append(t.suffix, '}')
	return t
}

// content returns the chunk of a content delta (valid until the next
// call).
func (t *tokenChunks) content(text string) []byte {
	return t.encode(`"content":`, text)
}

// reasoning returns the chunk of a reasoning delta (text not empty).
func (t *tokenChunks) reasoning(text string) []byte {
	return t.encode(`"reasoning_content":`, text)
}

func (t *tokenChunks) encode(key, text string) []byte {
	b := append(t.buf[:0], t.prefix...)
	b = append(b, key...)
	b = jsonstr.Append(b, text)
	b = append(b, t.suffix...)
	t.buf = b
	return b
}
