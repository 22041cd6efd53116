package llmtest

import (
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"hash/maphash"
	"math"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// This file makes the answers that honour a request's response_format,
// logprobs and seed, and the cached tokens of its usage.

// Wire types of log probabilities, in OpenAI's field order.
type (
	wireLogProbs struct {
		Content []wireLogProb `json:"content"`
		Refusal []wireLogProb `json:"refusal"`
	}
	wireLogProb struct {
		Token       string       `json:"token"`
		Logprob     float64      `json:"logprob"`
		Bytes       []int        `json:"bytes"`
		TopLogprobs []wireTopLog `json:"top_logprobs"`
	}
	wireTopLog struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		Bytes   []int   `json:"bytes"`
	}
)

// LogProb is the log probability the server reports for the content
// token at position i (0-based) when no Reply.LogProbs applies: a value in
// (-10, 0] computed from the token, its position and seed.
func LogProb(seed int64, i int, token string) float64 {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatInt(seed, 10) + "/" + strconv.Itoa(i) + "/" + token))
	return -math.Round(float64(h.Sum64()%10000)) / 1000
}

// seed is the request's seed, 0 when absent.
func (x *exchange) seed() int64 {
	if x.req.Seed != nil {
		return *x.req.Seed
	}
	return 0
}

// logProb is the log probability of the content token at position i,
// with TopLogProbs alternatives (the token itself first).
func (x *exchange) logProb(i int, token string) wireLogProb {
	lp := LogProb(x.seed(), i, token)
	if i < len(x.reply.LogProbs) {
		lp = x.reply.LogProbs[i]
	}
	out := wireLogProb{Token: token, Logprob: lp, Bytes: byteInts(token), TopLogprobs: []wireTopLog{}}
	for k := range x.req.TopLogProbs {
		alt := token
		altLP := lp
		if k > 0 {
			alt = token + strings.Repeat("~", k)
			altLP = lp - float64(k)
		}
		out.TopLogprobs = append(out.TopLogprobs, wireTopLog{Token: alt, Logprob: altLP, Bytes: byteInts(alt)})
	}
	return out
}

// completionLogProbs is choices[0].logprobs of a non-streamed answer:
// null unless the request asked for them.
func (x *exchange) completionLogProbs(content []string) any {
	if !x.req.LogProbs {
		return nil
	}
	lp := wireLogProbs{Content: []wireLogProb{}}
	for i, c := range content {
		lp.Content = append(lp.Content, x.logProb(i, c))
	}
	return lp
}

func byteInts(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// jsonAnswer is the content of a reply to a request that asked for JSON:
// Reply.JSON, else a minimal instance of the json_schema's schema, else
// {"text": Reply.Text}.
func (x *exchange) jsonAnswer() string {
	if x.reply.JSON != "" {
		return x.reply.JSON
	}
	rf := x.req.ResponseFormat
	if rf.Type == "json_schema" && rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 {
		var schema any
		if err := json.Unmarshal(rf.JSONSchema.Schema, &schema); err == nil {
			b, err := json.Marshal(Instance(schema))
			if err == nil {
				return string(b)
			}
		}
	}
	b, _ := json.Marshal(map[string]string{"text": strings.Join(x.reply.content(), "")})
	return string(b)
}

// maxInstanceDepth bounds the nesting Instance follows.
const maxInstanceDepth = 32

// Instance returns a minimal JSON value conforming to a JSON Schema (as
// decoded by encoding/json): every property of an object (strict
// schemas require them all), the first of an enum, anyOf or oneOf, a
// const, the minimum of a number, minItems elements of an array, a string
// of minLength "x"s; $ref to #/$defs or #/definitions is followed.
func Instance(schema any) any {
	root, _ := schema.(map[string]any)
	return instance(root, schema, 0)
}

func instance(root map[string]any, schema any, depth int) any {
	s, ok := schema.(map[string]any)
	if !ok || depth > maxInstanceDepth {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if ref, ok := s["$ref"].(string); ok {
		return instance(root, resolveRef(root, ref), depth+1)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return instance(root, alts[0], depth+1)
		}
	}
	typ := s["type"]
	if list, ok := typ.([]any); ok {
		typ = nil
		for _, t := range list {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			out[name] = instance(root, p, depth+1)
		}
		return out
	case "array":
		n, _ := s["minItems"].(float64)
		out := make([]any, 0, int(n))
		for range int(min(n, 16)) {
			out = append(out, instance(root, s["items"], depth+1))
		}
		return out
	case "string":
		n, _ := s["minLength"].(float64)
		return strings.Repeat("x", int(min(n, 64)))
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			if typ == "integer" {
				return math.Ceil(m)
			}
			return m
		}
		return 0
	case "boolean":
		return false
	}
	return nil
}

// resolveRef finds a local reference (#/$defs/Name or
// #/definitions/Name).
func resolveRef(root map[string]any, ref string) any {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			defs, _ := root[strings.Trim(prefix[1:], "/")].(map[string]any)
			return defs[name]
		}
	}
	if ref == "#" {
		return root
	}
	return nil
}

// cachedPrefix is the prompt tokens of the longest prefix of req's
// messages that an earlier request sent, as a provider's prompt cache
// reports them (0 when none). It looks the prefixes up by their hashes
// (record keeps those of every request), so a server that has answered
// many requests answers as fast as a fresh one.
func (s *Server) cachedPrefix(req Request) int {
	hashes := prefixHashes(s.seed, req.Messages)
	s.mu.Lock()
	best := 0
	for n := len(hashes); n > 0; n-- {
		if first, ok := s.prefixes[hashes[n-1]]; ok && first < req.N {
			best = n
			break
		}
	}
	s.mu.Unlock()
	tokens := 0
	for _, m := range req.Messages[:best] {
		tokens += messageTokens(m)
	}
	return tokens
}

// prefixHashes returns, for n = 1..len(msgs), the hash of the prompt text
// of msgs[:n] (what a provider's prompt cache compares).
func prefixHashes(seed maphash.Seed, msgs []openai.ChatCompletionMessage) []uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	field := func(v string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(v)))
		_, _ = h.Write(n[:]) // a maphash.Hash write never fails
		_, _ = h.WriteString(v)
	}
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		field(m.Role)
		field(m.Content)
		field(m.Name)
		field(m.ToolCallID)
		field(strconv.Itoa(len(m.ToolCalls)))
		for _, c := range m.ToolCalls {
			field(c.ID)
			field(c.Function.Name)
			field(c.Function.Arguments)
		}
		field(strconv.Itoa(len(m.MultiContent)))
		for _, p := range m.MultiContent {
			field(p.Text)
		}
		out[i] = h.Sum64()
	}
	return out
}

// messageTokens is the prompt tokens the server counts for m: its words
// and 4 for the message.
func messageTokens(m openai.ChatCompletionMessage) int {
	n := len(strings.Fields(m.Content)) + 4
	for _, p := range m.MultiContent {
		n += len(strings.Fields(p.Text))
	}
	return n
}
