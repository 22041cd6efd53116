package llm

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"agentchat/internal/jsonstr"
)

// This file writes the JSON body of a streamed chat completion request by
// hand: the same JSON value as json.Marshal of the
// openai.ChatCompletionRequest (what go-openai sends), up to the order of
// keys, the whitespace inside raw tool schemas and the escaping of
// characters, without reflection. Anything it does not know (a field
// (*client).request never sets, a Go type it does not handle, a value
// json.Marshal refuses) makes the whole request go through json.Marshal,
// so that nothing is silently dropped and errors stay go-openai's.

// maxPooledEncodeBuf is the largest scratch buffer kept for reuse.
const maxPooledEncodeBuf = 1 << 20

// encodeBufs holds scratch buffers for marshalChatRequest.
var encodeBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

// marshalChatRequest returns the JSON body of r: json.Marshal(r) as a JSON
// value, and exactly json.Marshal's result (body or error) when the hand
// encoder gives up. The body is a fresh slice of its own: the HTTP
// transport may read a request body after Do returns, and replays it
// through GetBody, so it never goes back to a pool.
func marshalChatRequest(r *openai.ChatCompletionRequest, schemas *validJSON) ([]byte, error) {
	bp := encodeBufs.Get().(*[]byte)
	b, ok := appendChatRequest((*bp)[:0], r, schemas)
	var out []byte
	if ok {
		out = bytes.Clone(b)
	}
	if cap(b) <= maxPooledEncodeBuf {
		*bp = b[:0]
		encodeBufs.Put(bp)
	}
	if ok {
		return out, nil
	}
	return json.Marshal(r)
}

// onlyEncodedFields reports whether every field of r that
// appendChatRequest does not write is one json.Marshal omits (omitempty
// and empty). TestEncoderCoversRequestFields keeps this list complete.
func onlyEncodedFields(r *openai.ChatCompletionRequest) bool {
	//lint:ignore SA1019 deprecated fields a caller sets must still be sent
	legacy := len(r.Functions) != 0 || r.FunctionCall != nil
	return !legacy && r.TopP == 0 && r.N == 0 && r.PresencePenalty == 0 && r.ResponseFormat == nil &&
		r.Seed == nil && r.FrequencyPenalty == 0 && len(r.LogitBias) == 0 && !r.LogProbs &&
		r.TopLogProbs == 0 && r.User == "" &&
		r.ParallelToolCalls == nil && !r.Store && r.ReasoningEffort == "" && len(r.Metadata) == 0 &&
		r.Prediction == nil && len(r.ChatTemplateKwargs) == 0 && r.ServiceTier == "" &&
		r.Verbosity == "" && r.SafetyIdentifier == "" && len(r.GuidedChoice) == 0
}

// appendChatRequest appends the JSON of r to b; false when r holds
// something it leaves to json.Marshal.
func appendChatRequest(b []byte, r *openai.ChatCompletionRequest, schemas *validJSON) ([]byte, bool) {
	if !onlyEncodedFields(r) {
		return b, false
	}
	ok := true
	b = append(b, `{"model":`...)
	b = jsonstr.Append(b, r.Model)
	b = append(b, `,"messages":`...)
	if r.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendMessage(b, &r.Messages[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	//lint:ignore SA1019 max_tokens is sent as go-openai sends it
	if n := r.MaxTokens; n != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	if r.MaxCompletionTokens != 0 {
		b = append(b, `,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxCompletionTokens), 10)
	}
	if r.Temperature != 0 {
		b = append(b, `,"temperature":`...)
		if b, ok = appendFloat32(b, r.Temperature); !ok {
			return b, false
		}
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	if len(r.Stop) > 0 {
		b = append(b, `,"stop":[`...)
		for i, s := range r.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, s)
		}
		b = append(b, ']')
	}
	if len(r.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range r.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendTool(b, &r.Tools[i], schemas); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if r.ToolChoice != nil {
		b = append(b, `,"tool_choice":`...)
		if b, ok = appendToolChoiceValue(b, r.ToolChoice); !ok {
			return b, false
		}
	}
	if o := r.StreamOptions; o != nil {
		b = append(b, `,"stream_options":{`...)
		if o.IncludeUsage {
			b = append(b, `"include_usage":true`...)
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendMessage writes m as openai.ChatCompletionMessage.MarshalJSON
// does: content is the parts when there are any, else the text (omitted
// when empty).
func appendMessage(b []byte, m *openai.ChatCompletionMessage) ([]byte, bool) {
	if m.Content != "" && m.MultiContent != nil {
		return b, false // json.Marshal reports openai.ErrContentFieldsMisused
	}
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, m.Role)
	switch {
	case len(m.MultiContent) > 0:
		b = append(b, `,"content":[`...)
		for i := range m.MultiContent {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPart(b, &m.MultiContent[i])
		}
		b = append(b, ']')
	case m.Content != "":
		b = append(b, `,"content":`...)
		b = jsonstr.Append(b, m.Content)
	}
	b = appendOptString(b, `,"refusal":`, m.Refusal)
	b = appendOptString(b, `,"name":`, m.Name)
	b = appendOptString(b, `,"reasoning_content":`, m.ReasoningContent)
	if m.FunctionCall != nil {
		b = append(b, `,"function_call":`...)
		b = appendFunctionCall(b, m.FunctionCall)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendToolCall(b, &m.ToolCalls[i])
		}
		b = append(b, ']')
	}
	b = appendOptString(b, `,"tool_call_id":`, m.ToolCallID)
	return append(b, '}'), true
}

// appendOptString writes key (`,"name":`) and s unless s is empty
// (omitempty).
func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return jsonstr.Append(b, s)
}

// object writes the members of a JSON object whose members are all
// optional, with the commas between them.
type object struct {
	b    []byte
	some bool
}

// str writes key (`"name":`) and s unless s is empty.
func (o *object) str(key, s string) {
	if s == "" {
		return
	}
	o.key(key)
	o.b = jsonstr.Append(o.b, s)
}

// key writes a member's key, after a comma unless it is the first.
func (o *object) key(key string) {
	if o.some {
		o.b = append(o.b, ',')
	}
	o.some = true
	o.b = append(o.b, key...)
}

// appendPart writes an openai.ChatMessagePart (every field omitempty).
func appendPart(b []byte, p *openai.ChatMessagePart) []byte {
	o := object{b: append(b, '{')}
	o.str(`"type":`, string(p.Type))
	o.str(`"text":`, p.Text)
	if u := p.ImageURL; u != nil {
		o.key(`"image_url":`)
		img := object{b: append(o.b, '{')}
		img.str(`"url":`, u.URL)
		img.str(`"detail":`, string(u.Detail))
		o.b = append(img.b, '}')
	}
	return append(o.b, '}')
}

// appendFunctionCall writes an openai.FunctionCall (name and arguments
// omitempty).
func appendFunctionCall(b []byte, f *openai.FunctionCall) []byte {
	o := object{b: append(b, '{')}
	o.str(`"name":`, f.Name)
	o.str(`"arguments":`, f.Arguments)
	return append(o.b, '}')
}

// appendToolCall writes an openai.ToolCall: type and function always,
// index and id when set.
func appendToolCall(b []byte, tc *openai.ToolCall) []byte {
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, string(tc.Type))
	if tc.Index != nil {
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(*tc.Index), 10)
	}
	b = appendOptString(b, `,"id":`, tc.ID)
	b = append(b, `,"function":`...)
	b = appendFunctionCall(b, &tc.Function)
	return append(b, '}')
}

// appendTool writes an openai.Tool as its MarshalJSON does: type, and
// function when set. A tool with Responses API properties (Parameters)
// goes through json.Marshal, which also refuses the reserved keys.
func appendTool(b []byte, t *openai.Tool, schemas *validJSON) ([]byte, bool) {
	if len(t.Parameters) > 0 {
		return appendMarshal(b, *t)
	}
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, string(t.Type))
	if f := t.Function; f != nil {
		b = append(b, `,"function":{"name":`...)
		b = jsonstr.Append(b, f.Name)
		b = appendOptString(b, `,"description":`, f.Description)
		if f.Strict {
			b = append(b, `,"strict":true`...)
		}
		b = append(b, `,"parameters":`...)
		var ok bool
		if b, ok = appendSchema(b, f.Parameters, schemas); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendSchema writes a tool's parameters: a json.RawMessage as it is once
// it is known to be valid JSON (json.Marshal would only compact it), nil as
// null, any other value through json.Marshal. An invalid RawMessage (an
// empty one included) is left to json.Marshal, which reports it.
func appendSchema(b []byte, v any, schemas *validJSON) ([]byte, bool) {
	switch p := v.(type) {
	case nil:
		return append(b, "null"...), true
	case json.RawMessage:
		if p == nil {
			return append(b, "null"...), true
		}
		if !schemas.valid(p) {
			return b, false
		}
		return append(b, p...), true
	}
	return appendMarshal(b, v)
}

// appendToolChoiceValue writes tool_choice: a string, an
// openai.ToolChoice (or a pointer to one), anything else through
// json.Marshal.
func appendToolChoiceValue(b []byte, v any) ([]byte, bool) {
	switch c := v.(type) {
	case string:
		return jsonstr.Append(b, c), true
	case openai.ToolChoice:
		return appendToolChoice(b, &c), true
	case *openai.ToolChoice:
		if c == nil {
			return append(b, "null"...), true
		}
		return appendToolChoice(b, c), true
	}
	return appendMarshal(b, v)
}

// appendToolChoice writes an openai.ToolChoice (no field omitted).
func appendToolChoice(b []byte, c *openai.ToolChoice) []byte {
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, string(c.Type))
	b = append(b, `,"function":{"name":`...)
	b = jsonstr.Append(b, c.Function.Name)
	return append(b, "}}"...)
}

// appendMarshal writes v with json.Marshal (false when it fails: the
// request is then marshalled as a whole, for go-openai's error).
func appendMarshal(b []byte, v any) ([]byte, bool) {
	enc, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, enc...), true
}

// appendFloat32 writes f as encoding/json writes a float32 (false for NaN
// and infinities, which it refuses).
func appendFloat32(b []byte, f32 float32) ([]byte, bool) {
	f := float64(f32)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := float32(math.Abs(f)); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 32)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
