package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/openaierr"

	openai "github.com/sashabaranov/go-openai"
)

// Request limits.
const (
	// MaxMessageBytes bounds the "message" of ChatRequest.
	MaxMessageBytes = 32 << 10
	// MaxStop is the largest number of stop sequences (OpenAI's limit).
	MaxStop = 4
	// MaxTools bounds the tools a client declares.
	MaxTools = 128
	// maxTokensLimit bounds max_tokens (larger values are clamped).
	maxTokensLimit = math.MaxInt32
)

// ChatCompletionRequest is the body of POST /v1/chat/completions, OpenAI's
// Chat Completions request. Every field that changes the answer is
// forwarded to the model or refused with a 400 naming it (README.md has
// the table); fields that do not change the answer (store, metadata,
// service_tier, prompt_cache_key, safety_identifier, prediction) and
// unknown fields are accepted and ignored.
//
//   - agent_id, then model, select the agent; an unknown or missing one
//     runs the fallback agent (naked), so "gpt-3.5-turbo" works.
//   - messages: roles system, developer (sent as system), user, assistant
//     (with tool_calls) and tool (with tool_call_id). content is a string,
//     null, or an array of parts: text parts are joined with "\n"; image,
//     audio and file parts are refused with 400 (the agents read text).
//     A conversation of system messages only is answered.
//   - stream, stream_options.include_usage: see the package doc.
//   - temperature (0..2), max_completion_tokens or max_tokens (≥ 1, bound
//     every LLM call of the run), stop (a string or up to 4 strings).
//   - tools: function tools the client runs itself; when the model calls
//     one, the response ends with those tool_calls (finish_reason
//     "tool_calls").
//   - tool_choice: "auto", "none" (no tool call during the whole run; the
//     tools stay declared, so a history with tool messages stays valid; a
//     client tool call a provider returns anyway is dropped, never sent
//     as tool_calls, and the answer ends with finish_reason "stop"),
//     "required" or {"type":"function","function":{"name":...}} naming a
//     client tool or a tool of the agent. A forced choice applies to the
//     agent's first LLM call only, so that after running the tool it was
//     made to call the agent can answer. Anything else, or a function the
//     run does not offer, is a 400 about tool_choice.
//   - n other than 1 is refused.
//   - top_p, seed, presence_penalty, frequency_penalty, logit_bias,
//     logprobs, top_logprobs, response_format, parallel_tool_calls,
//     reasoning_effort, verbosity and user (ModelOptions): validated and
//     sent on every LLM call of the run; response_format thus shapes the
//     final answer (the provider applies it to content, not tool calls),
//     and with logprobs the model's log probabilities come back in
//     choices[].logprobs of every content chunk and of the message.
//   - audio, modalities other than ["text"], functions, function_call and
//     web_search_options are refused (Unsupported).
//   - copilot_mode (an extension): the gns3-copilot's mode for this
//     request, teaching_assistant (the default) or lab_automation_assistant.
type ChatCompletionRequest struct {
	Model               string          `json:"model"`
	AgentID             string          `json:"agent_id"`
	Messages            []Message       `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *StreamOptions  `json:"stream_options"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
	Tools               []ToolSpec      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	N                   *int64          `json:"n"`
	CopilotMode         string          `json:"copilot_mode"`
	ModelOptions
	Unsupported
}

// StreamOptions are the stream_options of a completion request.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// IncludeCost adds cost_usd to the usage chunk (agentchat's own).
	IncludeCost bool `json:"include_cost"`
}

// Message is one message of a request.
type Message struct {
	Role string `json:"role"`
	// Content is a string, null, or an array of content parts.
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []ToolCallSpec  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// ToolCallSpec is a tool call of an assistant message in the history.
type ToolCallSpec struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON text in a string (an object is accepted too).
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ToolSpec is a tool the client declares.
type ToolSpec struct {
	Type     string        `json:"type"`
	Function *FunctionSpec `json:"function"`
}

// FunctionSpec is the function of a ToolSpec.
type FunctionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// ChatRequest is the body of POST /v1/chat and POST /v1/chat/sync:
//
//	{"agent_id": "media-agent", "message": "Request Dune", "temperature": 0.3}
//
// agent_id (or model) selects the agent as for completions. message is the
// new user message (≤ 32 KiB); messages, in the Chat Completions format, is
// the history before it. At least one of the two is required; with both,
// message is appended after messages. temperature (0..2), max_tokens (≥ 1)
// and stop are optional, and copilot_mode and the ModelOptions as for
// completions, but for logprobs and top_logprobs (the token stream has no
// place for them: use /v1/chat/completions); they and the fields of
// completions these routes cannot honour (tools, tool_choice, n > 1 and
// the Unsupported ones) are refused with a 400 naming them. Other fields
// are ignored.
type ChatRequest struct {
	AgentID     string          `json:"agent_id"`
	Model       string          `json:"model"`
	Message     *string         `json:"message"`
	Messages    []Message       `json:"messages"`
	Temperature *float64        `json:"temperature"`
	MaxTokens   *int64          `json:"max_tokens"`
	Stop        json.RawMessage `json:"stop"`
	CopilotMode string          `json:"copilot_mode"`
	// MaxCompletionTokens is the newer name of max_tokens.
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Tools               json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	N                   *int64          `json:"n"`
	ModelOptions
	Unsupported
}

// runRequest is a validated request of any chat route.
type runRequest struct {
	// agentID and model are the client's selectors (either may be empty).
	agentID, model string
	stream         bool
	includeUsage   bool
	// includeCost: usage carries cost_usd (wantsCost).
	includeCost bool
	// logprobs: the client asked for the model's log probabilities.
	logprobs bool
	req      agent.StatelessRequest
}

// decode reads the JSON body into dst (unknown fields tolerated).
func decode(w http.ResponseWriter, r *http.Request, dst any) error {
	return httpapi.DecodeJSON(w, r, dst, httpapi.DecodeOptions{MaxBytes: MaxBodyBytes})
}

// validate checks a completion request and converts it.
func (c *ChatCompletionRequest) validate() (*runRequest, error) {
	rr := &runRequest{agentID: c.AgentID, model: c.Model, stream: c.Stream}
	if c.Stream && c.StreamOptions != nil {
		// The cost comes in the usage chunk.
		rr.includeCost = c.StreamOptions.IncludeCost
		rr.includeUsage = c.StreamOptions.IncludeUsage || rr.includeCost
	}
	if c.N != nil && *c.N != 1 {
		return nil, openaierr.Invalid("n", "Only n=1 is supported (got %d).", *c.N)
	}
	if err := c.Unsupported.check(); err != nil {
		return nil, err
	}
	opts, err := c.ModelOptions.convert()
	if err != nil {
		return nil, err
	}
	rr.req.Options, rr.logprobs = opts, opts.LogProbs
	msgs, err := convertMessages(c.Messages, "messages")
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, openaierr.Invalid("messages", "'messages' must contain at least one message.")
	}
	rr.req.Messages = msgs
	if rr.req.Temperature, err = temperature(c.Temperature); err != nil {
		return nil, err
	}
	switch {
	case c.MaxCompletionTokens != nil:
		rr.req.MaxTokens, err = maxTokens("max_completion_tokens", *c.MaxCompletionTokens)
	case c.MaxTokens != nil:
		rr.req.MaxTokens, err = maxTokens("max_tokens", *c.MaxTokens)
	}
	if err != nil {
		return nil, err
	}
	if rr.req.Stop, err = stopList(c.Stop); err != nil {
		return nil, err
	}
	if rr.req.ClientTools, err = convertTools(c.Tools); err != nil {
		return nil, err
	}
	if rr.req.ToolChoice, err = toolChoice(c.ToolChoice); err != nil {
		return nil, err
	}
	if rr.req.Mode, err = copilotMode(c.CopilotMode); err != nil {
		return nil, err
	}
	return rr, nil
}

// copilotMode validates the copilot_mode extension; empty stays empty (the
// agent's default applies).
func copilotMode(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	m, err := agents.ParseMode(s)
	if err != nil {
		return "", openaierr.Invalid("copilot_mode", "'copilot_mode' must be one of: %s.", strings.Join(agents.Modes(), ", "))
	}
	return m, nil
}

// validate checks a /v1/chat request and converts it.
func (c *ChatRequest) validate() (*runRequest, error) {
	rr := &runRequest{agentID: c.AgentID, model: c.Model}
	switch {
	case c.N != nil && *c.N != 1:
		return nil, openaierr.Invalid("n", "Only n=1 is supported (got %d).", *c.N)
	case set(c.Tools):
		return nil, openaierr.Invalid("tools", "'tools' is not supported here: use /v1/chat/completions for client tools.")
	case set(c.ToolChoice):
		return nil, openaierr.Invalid("tool_choice", "'tool_choice' is not supported here: use /v1/chat/completions.")
	case c.Logprobs != nil && *c.Logprobs:
		return nil, openaierr.Invalid("logprobs", "'logprobs' is not supported here: use /v1/chat/completions.")
	case c.TopLogprobs != nil && *c.TopLogprobs != 0:
		return nil, openaierr.Invalid("top_logprobs", "'top_logprobs' is not supported here: use /v1/chat/completions.")
	}
	if err := c.Unsupported.check(); err != nil {
		return nil, err
	}
	opts, err := c.ModelOptions.convert()
	if err != nil {
		return nil, err
	}
	rr.req.Options = opts
	msgs, err := convertMessages(c.Messages, "messages")
	if err != nil {
		return nil, err
	}
	if c.Message != nil {
		m := *c.Message
		switch {
		case strings.TrimSpace(m) == "":
			return nil, openaierr.Invalid("message", "'message' must not be blank.")
		case len(m) > MaxMessageBytes:
			return nil, openaierr.Invalid("message", "'message' must be at most %d bytes (got %d).", MaxMessageBytes, len(m))
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m})
	}
	if len(msgs) == 0 {
		return nil, openaierr.Invalid("message", "'message' (or 'messages') is required.")
	}
	rr.req.Messages = msgs
	if rr.req.Temperature, err = temperature(c.Temperature); err != nil {
		return nil, err
	}
	switch {
	case c.MaxCompletionTokens != nil:
		rr.req.MaxTokens, err = maxTokens("max_completion_tokens", *c.MaxCompletionTokens)
	case c.MaxTokens != nil:
		rr.req.MaxTokens, err = maxTokens("max_tokens", *c.MaxTokens)
	}
	if err != nil {
		return nil, err
	}
	if rr.req.Stop, err = stopList(c.Stop); err != nil {
		return nil, err
	}
	if rr.req.Mode, err = copilotMode(c.CopilotMode); err != nil {
		return nil, err
	}
	return rr, nil
}

func temperature(t *float64) (*float32, error) {
	if t == nil {
		return nil, nil
	}
	if *t < 0 || *t > 2 || math.IsNaN(*t) {
		return nil, openaierr.Invalid("temperature", "'temperature' must be between 0 and 2 (got %g).", *t)
	}
	f := float32(*t)
	return &f, nil
}

func maxTokens(param string, n int64) (int, error) {
	if n < 1 {
		return 0, openaierr.Invalid(param, "'%s' must be at least 1 (got %d).", param, n)
	}
	return int(min(n, maxTokensLimit)), nil
}

// stopList accepts null, a string or an array of strings.
func stopList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, openaierr.Invalid("stop", "'stop' must be a string or an array of strings.")
	}
	if len(many) > MaxStop {
		return nil, openaierr.Invalid("stop", "'stop' accepts at most %d sequences (got %d).", MaxStop, len(many))
	}
	out := many[:0]
	for _, s := range many {
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// convertMessages validates messages and flattens their content.
func convertMessages(in []Message, param string) ([]openai.ChatCompletionMessage, error) {
	out := make([]openai.ChatCompletionMessage, 0, len(in)+1)
	for i := range in {
		m := &in[i]
		p := fmt.Sprintf("%s[%d]", param, i)
		text, err := contentText(m.Content, p+".content")
		if err != nil {
			return nil, err
		}
		msg := openai.ChatCompletionMessage{Content: text, Name: m.Name}
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			// Many OpenAI-compatible servers do not know "developer".
			msg.Role = openai.ChatMessageRoleSystem
		case openai.ChatMessageRoleUser:
			msg.Role = m.Role
		case openai.ChatMessageRoleAssistant:
			msg.Role = m.Role
			for j := range m.ToolCalls {
				tc, err := convertToolCall(&m.ToolCalls[j], fmt.Sprintf("%s.tool_calls[%d]", p, j))
				if err != nil {
					return nil, err
				}
				msg.ToolCalls = append(msg.ToolCalls, tc)
			}
		case openai.ChatMessageRoleTool:
			if m.ToolCallID == "" {
				return nil, openaierr.Invalid(p+".tool_call_id", "'%s.tool_call_id' is required for a tool message.", p)
			}
			msg.Role, msg.ToolCallID = m.Role, m.ToolCallID
		case openai.ChatMessageRoleFunction:
			return nil, openaierr.Invalid(p+".role", "Role 'function' (deprecated) is not supported: use 'tools' and role 'tool'.")
		case "":
			return nil, openaierr.Invalid(p+".role", "'%s.role' is required.", p)
		default:
			return nil, openaierr.Invalid(p+".role", "Invalid value for '%s.role': %q (want system, developer, user, assistant or tool).", p, clip(m.Role, 32))
		}
		out = append(out, msg)
	}
	return out, nil
}

func convertToolCall(tc *ToolCallSpec, param string) (openai.ToolCall, error) {
	if tc.Type != "" && tc.Type != string(openai.ToolTypeFunction) {
		return openai.ToolCall{}, openaierr.Invalid(param+".type", "Only tool calls of type 'function' are supported (got %q).", clip(tc.Type, 32))
	}
	if tc.Function.Name == "" {
		return openai.ToolCall{}, openaierr.Invalid(param+".function.name", "'%s.function.name' is required.", param)
	}
	args := ""
	raw := bytes.TrimSpace(tc.Function.Arguments)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &args); err != nil {
			return openai.ToolCall{}, openaierr.Invalid(param+".function.arguments", "'%s.function.arguments' must be a JSON string.", param)
		}
	case raw[0] == '{':
		args = string(raw)
	default:
		return openai.ToolCall{}, openaierr.Invalid(param+".function.arguments", "'%s.function.arguments' must be a JSON string.", param)
	}
	return openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: args}}, nil
}

// contentPart is one element of an array content.
type contentPart struct {
	Type    string  `json:"type"`
	Text    *string `json:"text"`
	Refusal *string `json:"refusal"`
}

// contentText flattens a content (string, null or parts) to text.
func contentText(raw json.RawMessage, param string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", openaierr.Invalid(param, "'%s' is not a valid string.", param)
		}
		return s, nil
	case '[':
	default:
		return "", openaierr.Invalid(param, "'%s' must be a string, an array of content parts or null.", param)
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", openaierr.Invalid(param, "'%s' must be a string, an array of content parts or null.", param)
	}
	texts := make([]string, 0, len(parts))
	for j, rawPart := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		var part contentPart
		if err := json.Unmarshal(rawPart, &part); err != nil {
			return "", openaierr.Invalid(pp, "'%s' must be a content part object such as {\"type\":\"text\",\"text\":\"...\"}.", pp)
		}
		switch part.Type {
		case "text", "input_text", "output_text":
			if part.Text == nil {
				return "", openaierr.Invalid(pp+".text", "'%s.text' is required for a text part.", pp)
			}
			texts = append(texts, *part.Text)
		case "refusal":
			if part.Refusal != nil {
				texts = append(texts, *part.Refusal)
			}
		case "image_url", "input_image", "image", "input_audio", "audio", "file", "input_file":
			return "", openaierr.Invalid(pp, "Content parts of type '%s' are not supported: the agents here read text only. Send text parts.", part.Type)
		case "":
			return "", openaierr.Invalid(pp+".type", "'%s.type' is required.", pp)
		default:
			return "", openaierr.Invalid(pp+".type", "Unsupported content part type %q (send text parts).", clip(part.Type, 32))
		}
	}
	return strings.Join(texts, "\n"), nil
}

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// emptySchema is the parameters of a function declared without any.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// convertTools validates the client's tool declarations.
func convertTools(in []ToolSpec) ([]openai.Tool, error) {
	if len(in) > MaxTools {
		return nil, openaierr.Invalid("tools", "At most %d tools are supported (got %d).", MaxTools, len(in))
	}
	seen := map[string]bool{}
	out := make([]openai.Tool, 0, len(in))
	for i := range in {
		t := &in[i]
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != string(openai.ToolTypeFunction) {
			return nil, openaierr.Invalid(p+".type", "Only tools of type 'function' are supported (got %q).", clip(t.Type, 32))
		}
		if t.Function == nil {
			return nil, openaierr.Invalid(p+".function", "'%s.function' is required.", p)
		}
		f := t.Function
		if !toolNamePattern.MatchString(f.Name) {
			return nil, openaierr.Invalid(p+".function.name", "'%s.function.name' must be 1 to 64 letters, digits, '_' or '-'.", p)
		}
		if seen[f.Name] {
			return nil, openaierr.Invalid(p+".function.name", "Tool %q is declared twice.", f.Name)
		}
		seen[f.Name] = true
		params := bytes.TrimSpace(f.Parameters)
		switch {
		case len(params) == 0 || string(params) == "null":
			params = emptySchema
		case params[0] != '{' || !json.Valid(params):
			return nil, openaierr.Invalid(p+".function.parameters", "'%s.function.parameters' must be a JSON Schema object.", p)
		}
		def := &openai.FunctionDefinition{Name: f.Name, Description: f.Description, Parameters: json.RawMessage(params)}
		if f.Strict != nil {
			def.Strict = *f.Strict
		}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
	}
	return out, nil
}

// toolChoiceSpec is an object tool_choice.
type toolChoiceSpec struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

// toolChoice validates tool_choice: null or absent (nil), "none", "auto",
// "required", or {"type":"function","function":{"name":...}} (an
// openai.ToolChoice). Whether the named function exists is checked by the
// run, which knows the agent's tools.
func toolChoice(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	const want = `none, auto, required or {"type":"function","function":{"name":"..."}}`
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, openaierr.Invalid("tool_choice", "'tool_choice' is not a valid string.")
		}
		switch s {
		case "none", "auto", "required":
			return s, nil
		}
		return nil, openaierr.Invalid("tool_choice", "Invalid value for 'tool_choice': %q (want %s).", clip(s, 32), want)
	case '{':
	default:
		return nil, openaierr.Invalid("tool_choice", "'tool_choice' must be a string or an object (%s).", want)
	}
	var spec toolChoiceSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, openaierr.Invalid("tool_choice", "'tool_choice' must be %s.", want)
	}
	switch {
	case spec.Type != string(openai.ToolTypeFunction):
		return nil, openaierr.Invalid("tool_choice.type", "Only a tool_choice of type 'function' is supported (got %q).", clip(spec.Type, 32))
	case spec.Function == nil:
		return nil, openaierr.Invalid("tool_choice.function", "'tool_choice.function' is required.")
	case !toolNamePattern.MatchString(spec.Function.Name):
		return nil, openaierr.Invalid("tool_choice.function.name", "'tool_choice.function.name' must be 1 to 64 letters, digits, '_' or '-'.")
	}
	return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: spec.Function.Name}}, nil
}
