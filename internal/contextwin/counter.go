package contextwin

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
	"github.com/tiktoken-go/tokenizer/codec"
)

// Encodings.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// Per-message overheads, following OpenAI's published way of counting chat
// tokens (the openai-cookbook "How to count tokens with tiktoken": every
// message is rendered as <|start|>{role or name}\n{content}<|end|>\n, and every
// reply is primed with <|start|>assistant<|message|>). The role, the content
// and the name are counted as text on top of these.
const (
	// TokensPerMessage frames every message.
	TokensPerMessage = 3
	// TokensPerName is added when a message has a name.
	TokensPerName = 1
	// ReplyPriming is added once per request, for the primed reply.
	ReplyPriming = 3
	// TokensPerToolCall frames each tool call of an assistant message (its id
	// and type), on top of the function name and arguments counted as text.
	// OpenAI publishes no figure for this; 3 mirrors TokensPerMessage.
	TokensPerToolCall = 3
	// TokensPerTool frames each tool definition and ToolsOverhead the tool
	// list as a whole: the cookbook's func_init (7) and func_end (12) for
	// gpt-4o-family tool counting. The schemas themselves are counted as the
	// compact JSON that is sent, which is more than the model's rendering of
	// them, so the estimate errs on the safe side.
	TokensPerTool = 7
	ToolsOverhead = 12
	// TokensPerImage is charged for an image part of a multi-part message:
	// a 1024×1024 image at high detail (85 + 4 tiles × 170). The image URL is
	// not counted as text.
	TokensPerImage = 765
)

// Cache bounds: each encoding keeps at most two generations of cacheGeneration
// entries. When the current generation is full it becomes the old one and the
// previous old one is dropped; a hit in the old generation is copied forward,
// so counts in use survive the turnover.
const cacheGeneration = 8192

// encoding is one vocabulary: its name and its codec, built once per
// process on first use and read-only after that.
type encoding struct {
	name  string
	codec func() *codec.Codec
}

// The vocabularies: lazily built constants, never changed once built.
var (
	o200k  = &encoding{name: O200kBase, codec: sync.OnceValue(codec.NewO200kBase)}
	cl100k = &encoding{name: Cl100kBase, codec: sync.OnceValue(codec.NewCl100kBase)}
)

// countCache caches message counts of one Counter, in two generations so
// that it stays bounded while counts still in use survive a turnover.
type countCache struct {
	seed maphash.Seed

	mu       sync.Mutex
	cur, old map[uint64]int
}

func (e *countCache) lookup(key uint64) (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n, ok := e.cur[key]; ok {
		return n, true
	}
	if n, ok := e.old[key]; ok {
		e.storeLocked(key, n)
		return n, true
	}
	return 0, false
}

func (e *countCache) store(key uint64, n int) {
	e.mu.Lock()
	e.storeLocked(key, n)
	e.mu.Unlock()
}

func (e *countCache) storeLocked(key uint64, n int) {
	if e.cur == nil {
		e.cur = make(map[uint64]int)
	}
	if len(e.cur) >= cacheGeneration {
		e.old, e.cur = e.cur, make(map[uint64]int, cacheGeneration/4)
	}
	e.cur[key] = n
}

// resetCache empties the cache (for tests and cold benchmarks).
func (e *countCache) resetCache() {
	e.mu.Lock()
	e.cur, e.old = nil, nil
	e.mu.Unlock()
}

// cacheLen returns the number of cached entries.
func (e *countCache) cacheLen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.cur) + len(e.old)
}

// o200kPrefixes returns the model families tokenized with o200k_base.
func o200kPrefixes() []string {
	return []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4"}
}

// EncodingForModel returns the encoding used for a model name: o200k_base for
// names starting with gpt-4o, chatgpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss, o1, o3 or o4
// (case-insensitive, after any provider path such as "openai/" and any "ft:"
// fine-tune prefix), cl100k_base for every other name.
func EncodingForModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "ft:")
	for _, p := range o200kPrefixes() {
		if strings.HasPrefix(m, p) {
			return O200kBase
		}
	}
	return Cl100kBase
}

// Counter counts tokens for one model, caching message counts (safe for
// concurrent use; bounded cache). Keep one Counter per model for the life
// of a process so that its cache stays warm; Counters share only the
// read-only vocabularies, built on first use (about 10 ms for cl100k_base,
// 25 ms for o200k_base).
type Counter struct {
	model string
	enc   *encoding
	cache *countCache
}

// NewCounter returns a Counter for the model (see EncodingForModel).
func NewCounter(model string) *Counter {
	enc := cl100k
	if EncodingForModel(model) == O200kBase {
		enc = o200k
	}
	return &Counter{model: model, enc: enc, cache: &countCache{seed: maphash.MakeSeed()}}
}

// Model returns the model name the Counter was made for.
func (c *Counter) Model() string { return c.model }

// Encoding returns "o200k_base" or "cl100k_base".
func (c *Counter) Encoding() string { return c.enc.name }

// Text returns the number of tokens of a string. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as the API treats it in
// message contents.
func (c *Counter) Text(s string) int {
	if s == "" {
		return 0
	}
	return countText(c.enc.codec(), s, segmentMin)
}

// Message returns the tokens of one message: TokensPerMessage, the role, the
// content (text parts, TokensPerImage per image part), the name plus
// TokensPerName, the reasoning content and refusal if set, and for each tool
// call TokensPerToolCall plus its function name and arguments (likewise the
// legacy function_call). The tool_call_id of a tool message is not counted.
// Counts are cached by a hash of exactly these fields.
func (c *Counter) Message(m openai.ChatCompletionMessage) int {
	key := c.messageKey(&m)
	if n, ok := c.cache.lookup(key); ok {
		return n
	}
	n := c.countMessage(&m)
	c.cache.store(key, n)
	return n
}

func (c *Counter) countMessage(m *openai.ChatCompletionMessage) int {
	n := TokensPerMessage + c.Text(m.Role) + c.Text(m.Content)
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeImageURL || p.ImageURL != nil {
			n += TokensPerImage
		}
		n += c.Text(p.Text)
	}
	if m.Name != "" {
		n += c.Text(m.Name) + TokensPerName
	}
	n += c.Text(m.ReasoningContent) + c.Text(m.Refusal)
	for _, tc := range m.ToolCalls {
		n += TokensPerToolCall + c.Text(tc.Function.Name) + c.Text(tc.Function.Arguments)
	}
	if fc := m.FunctionCall; fc != nil {
		n += TokensPerToolCall + c.Text(fc.Name) + c.Text(fc.Arguments)
	}
	return n
}

// Key domains, so that a message and a tool with the same strings differ.
const (
	keyMessage byte = 'm'
	keyTool    byte = 't'
)

type hasher struct{ maphash.Hash }

// str writes s with its length, so that consecutive fields cannot run into
// each other.
func (h *hasher) str(s string) {
	h.num(len(s))
	h.WriteString(s)
}

func (h *hasher) num(n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

func (c *Counter) messageKey(m *openai.ChatCompletionMessage) uint64 {
	var h hasher
	h.SetSeed(c.cache.seed)
	h.WriteByte(keyMessage)
	h.str(m.Role)
	h.str(m.Content)
	h.num(len(m.MultiContent))
	for _, p := range m.MultiContent {
		img := 0
		if p.Type == openai.ChatMessagePartTypeImageURL || p.ImageURL != nil {
			img = 1
		}
		h.num(img)
		h.str(p.Text)
	}
	h.str(m.Name)
	h.str(m.ReasoningContent)
	h.str(m.Refusal)
	h.num(len(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		h.str(tc.Function.Name)
		h.str(tc.Function.Arguments)
	}
	if fc := m.FunctionCall; fc != nil {
		h.num(1)
		h.str(fc.Name)
		h.str(fc.Arguments)
	} else {
		h.num(0)
	}
	return h.Sum64()
}

// Tools returns the tokens of the tool schemas as sent: ToolsOverhead once
// (if there are tools) and per tool TokensPerTool plus its name, description
// and compact JSON parameters (and any Responses-API inline parameters).
// Per-tool counts are cached by a hash of those strings.
func (c *Counter) Tools(tools []openai.Tool) int {
	if len(tools) == 0 {
		return 0
	}
	n := ToolsOverhead
	for i := range tools {
		n += c.tool(&tools[i])
	}
	return n
}

func (c *Counter) tool(t *openai.Tool) int {
	var name, desc string
	var params []byte
	if f := t.Function; f != nil {
		name, desc = f.Name, f.Description
		params = schemaJSON(f.Parameters)
	}
	var inline []byte
	if len(t.Parameters) > 0 {
		inline = schemaJSON(t.Parameters)
	}

	var h hasher
	h.SetSeed(c.cache.seed)
	h.WriteByte(keyTool)
	h.str(string(t.Type))
	h.str(name)
	h.str(desc)
	h.num(len(params))
	h.Write(params)
	h.num(len(inline))
	h.Write(inline)
	key := h.Sum64()
	if n, ok := c.cache.lookup(key); ok {
		return n
	}
	n := TokensPerTool + c.Text(name) + c.Text(desc) + c.Text(string(params)) + c.Text(string(inline))
	if name == "" {
		n += c.Text(string(t.Type))
	}
	c.cache.store(key, n)
	return n
}

// schemaJSON returns the compact JSON of a schema as encoding/json sends it:
// a json.RawMessage is compacted (kept as it is if invalid), anything else is
// marshalled.
func schemaJSON(v any) []byte {
	switch p := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		var buf bytes.Buffer
		if err := json.Compact(&buf, p); err != nil {
			return p
		}
		return buf.Bytes()
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil
		}
		return b
	}
}
