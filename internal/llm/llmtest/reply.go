package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Reply scripts the answer to one request. The zero Reply is an empty
// assistant message; set Text and/or ToolCalls for content.
//
// Positions "after N chunks" count the data lines written (the first one
// carries the role), so After 0 acts before any chunk.
type Reply struct {
	// Text is the content, streamed one word per chunk.
	Text string
	// Chunks, when set, are the content chunks verbatim (Text is then
	// ignored).
	Chunks []string
	// JSON is the content when the request asks for JSON
	// (response_format json_object or json_schema), streamed in small
	// fragments. Without it such a request gets a minimal instance of its
	// json_schema's schema, or {"text": Text} for json_object.
	JSON string
	// LogProbs, when set, are the log probabilities of the content chunks
	// in order (missing ones are computed); by default each is computed
	// from the token, its position and the request's seed.
	LogProbs []float64
	// Reasoning is streamed as reasoning_content, one word per chunk,
	// before the content.
	Reasoning string
	// ToolCalls are streamed after the content: a header fragment (index,
	// id, type, name, empty arguments) then argument fragments (index and
	// arguments only).
	ToolCalls []ToolCall
	// Interleave sends the fragments of parallel tool calls round-robin
	// instead of one call after the other.
	Interleave bool
	// OmitToolIndex leaves index out of tool-call fragments, as some
	// servers do (use with sequential calls).
	OmitToolIndex bool
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string
	// Usage is the reported usage; nil computes one (prompt: words in the
	// messages; completion: chunks of content, reasoning and arguments).
	Usage *Usage
	// NoUsage omits the usage chunk even when the request asked for it.
	NoUsage bool
	// Model is the reported model (default: the requested one).
	Model string
	// NoDone ends the stream cleanly without the final "data: [DONE]".
	NoDone bool

	// Status, when 400 or more, answers an OpenAI-shaped HTTP error.
	Status int
	// Error, ErrorType and ErrorCode override the error body's fields
	// (defaults follow OpenAI for the status).
	Error, ErrorType, ErrorCode string
	// Header adds response headers (e.g. Retry-After).
	Header http.Header

	// Delay waits before the response starts (before the headers).
	Delay time.Duration
	// ChunkDelay waits between two chunks.
	ChunkDelay time.Duration

	// Malformed sends a data line that is not JSON after MalformedAfter
	// chunks, then ends the stream normally. Non-streamed: a truncated body.
	Malformed      bool
	MalformedAfter int
	// StreamError sends `data: {"error":{...}}` with this message after
	// StreamErrorAfter chunks, then ends the response.
	StreamError      string
	StreamErrorAfter int
	// StreamErrorType and StreamErrorParam are the type (default
	// server_error) and param of that error event.
	StreamErrorType  string
	StreamErrorParam string
	// ErrorParam is the param of an HTTP error answer (Status).
	ErrorParam string
	// HangUp closes the connection without [DONE] after HangUpAfter chunks
	// (non-streamed: without any response).
	HangUp      bool
	HangUpAfter int
	// Hang stops answering after HangAfter chunks (0, or a non-streamed
	// request: before the headers) until the client goes away, which
	// Server.Disconnects reports.
	Hang      bool
	HangAfter int
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	// ID defaults to "call_<n>".
	ID   string
	Name string
	// Arguments is the JSON argument text, streamed in small fragments.
	Arguments string
	// Fragments, when set, are the argument fragments verbatim.
	Fragments []string
}

// Usage is token usage to report.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is reported as prompt_tokens_details.cached_tokens.
	CachedTokens int
}

// exchange answers one request.
type exchange struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	req   Request
	reply Reply

	id      string
	created int64
	model   string
	// cached is the prompt tokens of the longest message prefix an
	// earlier request sent (a provider's prompt cache).
	cached int
}

// serve writes the reply; false when the client went away first.
func (x *exchange) serve() bool {
	rp := &x.reply
	x.id = fmt.Sprintf("chatcmpl-llmtest%06d", x.req.N)
	x.created = time.Now().Unix()
	x.model = rp.Model
	if x.model == "" {
		x.model = x.req.Model
	}
	if x.model == "" {
		x.model = DefaultModel
	}
	x.cached = x.s.cachedPrefix(x.req)
	if rp.Hang && (rp.HangAfter == 0 || !x.req.Stream) {
		x.s.hang(x.r)
		return false
	}
	if !x.s.sleep(x.r, rp.Delay) {
		return false
	}
	if rp.HangUp && (rp.HangUpAfter == 0 || !x.req.Stream) {
		panic(http.ErrAbortHandler)
	}
	for k, v := range rp.Header {
		x.w.Header()[k] = v
	}
	x.w.Header().Set("X-Request-Id", "req_"+x.id)
	if rp.Status >= 400 {
		msg, typ, code := defaultError(rp.Status)
		if rp.Error != "" {
			msg = rp.Error
		}
		if rp.ErrorType != "" {
			typ = rp.ErrorType
		}
		if rp.ErrorCode != "" {
			code = rp.ErrorCode
		}
		writeErrorParam(x.w, rp.Status, msg, typ, code, rp.ErrorParam)
		return true
	}
	if !x.req.Stream {
		return x.serveCompletion()
	}
	return x.serveStream()
}

// content is the content chunks of the reply.
func (rp *Reply) content() []string {
	if rp.Chunks != nil {
		return rp.Chunks
	}
	return words(rp.Text)
}

// content is the content chunks of the answer to x.req: the reply's, or
// the JSON the request asked for.
func (x *exchange) content() []string {
	if !x.req.WantsJSON() || (x.reply.JSON == "" && len(x.reply.ToolCalls) > 0) {
		// A tool-calling step has no content to shape.
		return x.reply.content()
	}
	return fragments(x.jsonAnswer(), 8)
}

func (tc *ToolCall) fragments() []string {
	if tc.Fragments != nil {
		return tc.Fragments
	}
	return fragments(tc.Arguments, 6)
}

func (x *exchange) callID(i int) string {
	if id := x.reply.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_%d_%d", x.req.N, i)
}

func (x *exchange) finishReason() string {
	if x.reply.FinishReason != "" {
		return x.reply.FinishReason
	}
	if len(x.reply.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// usage is the reply's usage, computed when not scripted.
func (x *exchange) usage() Usage {
	if x.reply.Usage != nil {
		return *x.reply.Usage
	}
	prompt := 0
	for _, m := range x.req.Messages {
		prompt += messageTokens(m)
	}
	completion := len(x.content()) + len(words(x.reply.Reasoning))
	for i := range x.reply.ToolCalls {
		completion += len(x.reply.ToolCalls[i].fragments()) + 1
	}
	return Usage{PromptTokens: max(prompt, 1), CompletionTokens: max(completion, 1), CachedTokens: x.cached}
}

// Wire types, in OpenAI's field order.
type (
	wireChunk struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Choices           []wireChoice    `json:"choices"`
		Usage             json.RawMessage `json:"usage,omitempty"`
	}
	wireChoice struct {
		Index        int     `json:"index"`
		Delta        any     `json:"delta"`
		Logprobs     any     `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	}
	roleDelta struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
		Refusal   *string        `json:"refusal"`
	}
	contentDelta struct {
		Content string `json:"content"`
	}
	reasoningDelta struct {
		ReasoningContent string `json:"reasoning_content"`
	}
	toolDelta struct {
		ToolCalls []wireToolCall `json:"tool_calls"`
	}
	wireToolCall struct {
		Index    *int         `json:"index,omitempty"`
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	wireUsage struct {
		PromptTokens            int            `json:"prompt_tokens"`
		CompletionTokens        int            `json:"completion_tokens"`
		TotalTokens             int            `json:"total_tokens"`
		PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
		CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
	}
)

func toWireUsage(u Usage) wireUsage {
	return wireUsage{
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens:             u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails:     map[string]int{"cached_tokens": u.CachedTokens, "audio_tokens": 0},
		CompletionTokensDetails: map[string]int{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

// deltas builds the delta of every chunk before the final one.
func (x *exchange) deltas() []any {
	rp := &x.reply
	var out []any
	content := x.content()
	reasoning := words(rp.Reasoning)
	empty := ""
	tools := x.toolDeltas()
	if len(content) == 0 && len(reasoning) == 0 && len(tools) > 0 {
		out = append(out, roleDelta{Role: "assistant", ToolCalls: tools[0].ToolCalls})
		tools = tools[1:]
	} else {
		out = append(out, roleDelta{Role: "assistant", Content: &empty})
	}
	for _, w := range reasoning {
		out = append(out, reasoningDelta{ReasoningContent: w})
	}
	for _, c := range content {
		out = append(out, contentDelta{Content: c})
	}
	for _, t := range tools {
		out = append(out, t)
	}
	return out
}

// toolDeltas builds the tool-call fragments, sequential or interleaved.
func (x *exchange) toolDeltas() []toolDelta {
	rp := &x.reply
	type script struct{ parts []wireToolCall }
	scripts := make([]script, len(rp.ToolCalls))
	for i := range rp.ToolCalls {
		tc := &rp.ToolCalls[i]
		var idx *int
		if !rp.OmitToolIndex {
			idx = new(i)
		}
		parts := []wireToolCall{{Index: idx, ID: x.callID(i), Type: "function",
			Function: wireFunction{Name: tc.Name}}}
		for _, f := range tc.fragments() {
			parts = append(parts, wireToolCall{Index: idx, Function: wireFunction{Arguments: f}})
		}
		scripts[i].parts = parts
	}
	var out []toolDelta
	if !rp.Interleave {
		for _, s := range scripts {
			for _, p := range s.parts {
				out = append(out, toolDelta{ToolCalls: []wireToolCall{p}})
			}
		}
		return out
	}
	for round := 0; ; round++ {
		more := false
		for _, s := range scripts {
			if round < len(s.parts) {
				out = append(out, toolDelta{ToolCalls: []wireToolCall{s.parts[round]}})
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// serveStream writes the reply as server-sent chunks.
func (x *exchange) serveStream() bool {
	rp := &x.reply
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
	fl, _ := x.w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	includeUsage := x.req.IncludeUsage()
	var usageNull json.RawMessage
	if includeUsage {
		usageNull = json.RawMessage("null")
	}
	chunk := func(d any, finish *string) wireChunk {
		return wireChunk{ID: x.id, Object: "chat.completion.chunk", Created: x.created, Model: x.model,
			SystemFingerprint: "fp_llmtest", Usage: usageNull,
			Choices: []wireChoice{{Index: 0, Delta: d, FinishReason: finish}}}
	}
	var lines []any
	tok := 0
	for _, d := range x.deltas() {
		c := chunk(d, nil)
		if cd, ok := d.(contentDelta); ok && x.req.LogProbs {
			c.Choices[0].Logprobs = wireLogProbs{Content: []wireLogProb{x.logProb(tok, cd.Content)}}
			tok++
		}
		lines = append(lines, c)
	}
	finish := x.finishReason()
	lines = append(lines, chunk(struct{}{}, &finish))
	if includeUsage && !rp.NoUsage {
		u, _ := json.Marshal(toWireUsage(x.usage()))
		lines = append(lines, wireChunk{ID: x.id, Object: "chat.completion.chunk", Created: x.created,
			Model: x.model, SystemFingerprint: "fp_llmtest", Choices: []wireChoice{}, Usage: u})
	}

	for i := 0; ; i++ {
		// Scripted interruptions happen before line i (after i lines).
		switch {
		case rp.Hang && rp.HangAfter == i:
			x.s.hang(x.r)
			return false
		case rp.HangUp && rp.HangUpAfter == i:
			panic(http.ErrAbortHandler)
		case rp.Malformed && rp.MalformedAfter == i:
			if !x.writeData([]byte(`{"id":"` + x.id + `","object":"chat.completion.chunk","choices":[{"delta":{"content":"oops`)) {
				return false
			}
			return x.writeData([]byte("[DONE]"))
		case rp.StreamError != "" && rp.StreamErrorAfter == i:
			typ := rp.StreamErrorType
			if typ == "" {
				typ = "server_error"
			}
			if !x.writeData(errorObject(rp.StreamError, typ, "", rp.StreamErrorParam)) {
				return false
			}
			return true
		}
		if i == len(lines) {
			break
		}
		if i > 0 && !x.s.sleep(x.r, rp.ChunkDelay) {
			return false
		}
		b, err := json.Marshal(lines[i])
		if err != nil {
			panic(fmt.Sprintf("llmtest: marshal chunk: %v", err))
		}
		if !x.writeData(b) {
			return false
		}
	}
	if rp.NoDone {
		return true
	}
	return x.writeData([]byte("[DONE]"))
}

// writeData writes one "data: ...\n\n" line and flushes it.
func (x *exchange) writeData(payload []byte) bool {
	if x.r.Context().Err() != nil {
		return false
	}
	buf := make([]byte, 0, len(payload)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, payload...)
	buf = append(buf, '\n', '\n')
	if _, err := x.w.Write(buf); err != nil {
		return false
	}
	if fl, ok := x.w.(http.Flusher); ok {
		fl.Flush()
	}
	return true
}

// serveCompletion writes a chat.completion object.
func (x *exchange) serveCompletion() bool {
	rp := &x.reply
	x.w.Header().Set("Content-Type", "application/json")
	if rp.Malformed {
		x.w.WriteHeader(http.StatusOK)
		_, _ = x.w.Write([]byte(`{"id":"` + x.id + `","object":"chat.completion","choices":[{"message":{"content":"oops`))
		return true
	}
	type message struct {
		Role             string         `json:"role"`
		Content          *string        `json:"content"`
		ReasoningContent string         `json:"reasoning_content,omitempty"`
		Refusal          *string        `json:"refusal"`
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
		Annotations      []any          `json:"annotations"`
	}
	content := x.content()
	text := strings.Join(content, "")
	m := message{Role: "assistant", ReasoningContent: rp.Reasoning, Annotations: []any{}}
	if text != "" || len(rp.ToolCalls) == 0 {
		m.Content = &text
	}
	for i := range rp.ToolCalls {
		tc := &rp.ToolCalls[i]
		args := tc.Arguments
		if tc.Fragments != nil {
			args = strings.Join(tc.Fragments, "")
		}
		m.ToolCalls = append(m.ToolCalls, wireToolCall{ID: x.callID(i), Type: "function",
			Function: wireFunction{Name: tc.Name, Arguments: args}})
	}
	body, err := json.Marshal(map[string]any{
		"id": x.id, "object": "chat.completion", "created": x.created, "model": x.model,
		"choices": []any{map[string]any{
			"index": 0, "message": m, "logprobs": x.completionLogProbs(content), "finish_reason": x.finishReason(),
		}},
		"usage":              toWireUsage(x.usage()),
		"service_tier":       "default",
		"system_fingerprint": "fp_llmtest",
	})
	if err != nil {
		panic(fmt.Sprintf("llmtest: marshal completion: %v", err))
	}
	x.w.WriteHeader(http.StatusOK)
	_, err = x.w.Write(body)
	return err == nil
}
