package openaiwire

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
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
//   - stream, stream_options.include_usage: see the doc of package
//     gateway.
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

// RunRequest is a validated request of any chat route: the agent run it
// asks for and how the answer is to be encoded.
type RunRequest struct {
	// AgentID and Model are the client's selectors (either may be empty).
	AgentID, Model string
	Stream         bool
	IncludeUsage   bool
	// IncludeCost: usage carries cost_usd (stream_options.include_cost,
	// or the gateway's X-Include-Cost header).
	IncludeCost bool
	// Logprobs: the client asked for the model's log probabilities.
	Logprobs bool
	// Req is the run; the gateway adds the caller (user, key, slots).
	Req agent.StatelessRequest
}

// Convert validates a completion request and converts it to its run; a
// refusal is a 400 *openaierr.Error naming the param.
func (c *ChatCompletionRequest) Convert() (*RunRequest, error) {
	rr := &RunRequest{AgentID: c.AgentID, Model: c.Model, Stream: c.Stream}
	if c.Stream && c.StreamOptions != nil {
		// The cost comes in the usage chunk.
		rr.IncludeCost = c.StreamOptions.IncludeCost
		rr.IncludeUsage = c.StreamOptions.IncludeUsage || rr.IncludeCost
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
	rr.Req.Options, rr.Logprobs = opts, opts.LogProbs
	msgs, err := convertMessages(c.Messages, "messages")
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, openaierr.Invalid("messages", "'messages' must contain at least one message.")
	}
	rr.Req.Messages = msgs
	if err := rr.sampling(c.Temperature, c.MaxCompletionTokens, c.MaxTokens, c.Stop, c.CopilotMode); err != nil {
		return nil, err
	}
	if rr.Req.ClientTools, err = convertTools(c.Tools); err != nil {
		return nil, err
	}
	if rr.Req.ToolChoice, err = toolChoice(c.ToolChoice); err != nil {
		return nil, err
	}
	return rr, nil
}

// sampling sets what both request bodies say the same way: temperature,
// max_completion_tokens (or max_tokens), stop and copilot_mode.
func (rr *RunRequest) sampling(temp *float64, maxCompletion, maxTok *int64, stop json.RawMessage, mode string) error {
	var err error
	if rr.Req.Temperature, err = temperature(temp); err != nil {
		return err
	}
	switch {
	case maxCompletion != nil:
		rr.Req.MaxTokens, err = maxTokens("max_completion_tokens", *maxCompletion)
	case maxTok != nil:
		rr.Req.MaxTokens, err = maxTokens("max_tokens", *maxTok)
	}
	if err != nil {
		return err
	}
	if rr.Req.Stop, err = stopList(stop); err != nil {
		return err
	}
	rr.Req.Mode, err = copilotMode(mode)
	return err
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

// Convert validates a /v1/chat request and converts it to its run; a
// refusal is a 400 *openaierr.Error naming the param.
func (c *ChatRequest) Convert() (*RunRequest, error) {
	rr := &RunRequest{AgentID: c.AgentID, Model: c.Model}
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
	rr.Req.Options = opts
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
	rr.Req.Messages = msgs
	if err := rr.sampling(c.Temperature, c.MaxCompletionTokens, c.MaxTokens, c.Stop, c.CopilotMode); err != nil {
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
