// Package llm talks to OpenAI-compatible chat completion servers: one
// Client per resolved LLM configuration, streaming with tool-call
// accumulation and usage, retries before the first token, and errors a
// person can read without secrets in them. It uses go-openai's types and
// errors; non-streamed calls go through go-openai, streamed ones (the hot
// path) are encoded and read by this package with go-openai's semantics.
package llm

import (
	"context"
	"errors"
	"time"

	"agentchat/internal/pricing"

	openai "github.com/sashabaranov/go-openai"
)

// ErrNotConfigured means no LLM configuration applies to the caller.
var ErrNotConfigured = errors.New("llm not configured")

// Config is a resolved LLM configuration.
type Config struct {
	APIKey  string
	BaseURL string // empty: https://api.openai.com/v1
	Model   string
	// CallTimeout bounds a streamed call until its first token (connecting
	// and retries included) and a non-streamed call as a whole; 0 = 120s.
	// Once a stream has started, only IdleTimeout and the caller's context
	// (the turn deadline) bound it.
	CallTimeout time.Duration
	// IdleTimeout bounds the silence between two chunks of a streamed call
	// once its first token arrived (time spent in the caller's onDelta does
	// not count); 0 = 60s, or CallTimeout when that is shorter.
	IdleTimeout time.Duration
	// MaxRetries is the number of retries before the first token on 429,
	// 5xx and connection errors; 0 = 2, negative = none.
	MaxRetries int
	// RetryBackoff is the first retry delay, doubled each retry; 0 = 500ms.
	RetryBackoff time.Duration
	// MaxAnswerBytes caps the answer of one call: its content, reasoning
	// and tool calls (names and arguments) together; 0 = 1 MiB
	// (DefaultMaxAnswerBytes). An answer beyond it is cut there and the
	// call fails with an *Error matching ErrAnswerTooLarge.
	MaxAnswerBytes int
}

// Request is one chat completion call.
type Request struct {
	// Model overrides the configured model when set.
	Model    string
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	// ToolChoice is sent as tool_choice: nil or "" (the server's default),
	// "none", "auto", "required", or an openai.ToolChoice (or a pointer to
	// one) naming a function of Tools. Without Tools it is not sent ("none"
	// and "auto" change nothing then) and a forced choice is refused.
	ToolChoice  any
	Temperature *float32
	MaxTokens   int
	Stop        []string
	// Options are the client's other settings, sent on the call.
	Options Options
}

// ToolCallDelta reports the progress of one tool call while it streams.
type ToolCallDelta struct {
	// Index is the call's position in the assistant message.
	Index int
	// ID is the call id (stable from the first fragment on).
	ID   string
	Name string
	// Arguments is the cumulative argument text so far.
	Arguments string
	// Fragment is the argument text this delta added.
	Fragment string
	// First is true on the first delta of the call.
	First bool
}

// Delta is one streamed increment of the assistant message: content text,
// reasoning text, or tool-call progress (exactly one is set).
type Delta struct {
	Content   string
	Reasoning string
	ToolCall  *ToolCallDelta
	// LogProbs are the log probabilities of the tokens of Content, when
	// Options.LogProbs asked for them and the server sent them.
	LogProbs []TokenLogProb
	// More is true when the server's next increment has already arrived
	// with this one: onDelta is called again (or Stream returns) without
	// waiting for the server. A consumer that writes increments to a client
	// may hold this one back and send it with the next, in one write, as a
	// proxy copying the bytes would; an increment without More must go out
	// at once.
	More bool
}

// Usage is the token usage of one call.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CachedTokens is the part of PromptTokens the provider served from
	// its prompt cache (prompt_tokens_details.cached_tokens), 0 when it
	// reports none.
	CachedTokens int
}

// Result is the accumulated assistant message of one call. On error it holds
// what arrived before the failure.
type Result struct {
	Content      string
	Reasoning    string
	ToolCalls    []openai.ToolCall
	FinishReason string
	Usage        Usage
	// Model is the model name the server reported.
	Model string
	// LogProbs are the log probabilities of the content's tokens, when
	// asked for (Options.LogProbs) and sent.
	LogProbs []TokenLogProb
}

// Client is a chat completion client bound to one configuration.
type Client interface {
	// Stream runs a streamed call, invoking onDelta for each increment as
	// it arrives (never held while the server is awaited; see Delta.More). If onDelta returns an error the call is
	// cancelled and that error returned. Usage is requested with
	// stream_options.include_usage.
	Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Result, error)
	// Complete runs a non-streamed call.
	Complete(ctx context.Context, req Request) (*Result, error)
	// Model is the configured model name.
	Model() string
}

// Resolved is the LLM configuration that applies to a turn: its client
// and the settings the configuration carries (zero values: not set).
type Resolved struct {
	Client Client
	// Name names the configuration, for messages; empty for the server
	// default.
	Name string
	// Temperature is the configuration's temperature (a request's own
	// temperature overrides it).
	Temperature *float32
	// MaxTokens bounds each answer (0: the provider's default).
	MaxTokens int
	// ContextLimit is the model's context window in thousands of tokens;
	// 0 means unknown, and nothing is trimmed to fit.
	ContextLimit int
	// ContextStrategy is conservative, balanced or aggressive (empty:
	// balanced).
	ContextStrategy string
	// CopilotMode is the configuration's gns3-copilot mode, used when
	// neither the request nor the session names one.
	CopilotMode string
	// Approval is the configuration's approval policy (config.approval:
	// off, changes or all; package approval), used when neither the
	// request nor the session sets one.
	Approval string
	// Prices are the model's prices (config.input_cost_per_mtok...,
	// OPENAI_PRICES for the server default); unknown when not given.
	Prices pricing.Prices
}

// Resolver finds the LLM configuration that applies to a user.
type Resolver interface {
	// Resolve returns the configuration for userID (the caller's identity
	// is in ctx), or an error wrapping ErrNotConfigured when none applies.
	Resolve(ctx context.Context, userID string) (Resolved, error)
}

// ConfigError is an LLM configuration that applies to the caller but
// cannot be used (its API key cannot be decrypted, its model type cannot
// chat). Message is a sentence for the person, without secrets.
type ConfigError struct {
	Message string
}

// Error returns the message.
func (e *ConfigError) Error() string { return e.Message }
