package openaiwire

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/llm"
	"agentchat/internal/pricing"

	openai "github.com/sashabaranov/go-openai"
)

// OwnedBy is the owned_by of every model entry.
const OwnedBy = "agentchat"

// AgentInfo is one entry of GET /v1/agents.
type AgentInfo struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// Model is an entry of the OpenAI model list (with the agent's
// description, which OpenAI's own entries lack and clients ignore).
type Model struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	Description string `json:"description,omitempty"`
}

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

// ModelOf is the model entry of agent a, listed since created.
func ModelOf(a *agent.Agent, created time.Time) Model {
	return Model{ID: a.ID, Object: "model", Created: created.Unix(), OwnedBy: OwnedBy, Description: a.Description}
}

// ModelNotFound is the 404 model_not_found of GET /v1/models/{id} for an
// id no agent has.
func ModelNotFound(id string) *openaierr.Error {
	return &openaierr.Error{
		Status:  http.StatusNotFound,
		Message: "The model '" + clip(id, 128) + "' does not exist. GET /v1/models lists the agents served here.",
		Param:   "model", Code: "model_not_found",
	}
}

// Token is an event of the /v1/chat stream: data: {"token":"..."}.
type Token struct {
	Token string `json:"token"`
}

// SyncResponse is the body answered by POST /v1/chat/sync.
type SyncResponse struct {
	AgentID  string `json:"agent_id"`
	Response string `json:"response"`
	Usage    Usage  `json:"usage"`
}

// Usage is the token usage of a response, summed over every LLM call of
// the agent run.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CostUSD is what the run's LLM calls cost, only when the client asked
	// for it (the gateway's X-Include-Cost, stream_options.include_cost):
	// a number, or null when the model has no prices.
	CostUSD Cost `json:"cost_usd,omitempty"`
}

// Cost is the cost_usd of a usage as JSON text: a number, or null when it
// is unknown; empty when not asked for (and then left out).
type Cost string

// MarshalJSON writes the text as it is.
func (c Cost) MarshalJSON() ([]byte, error) {
	if c == "" {
		return []byte("null"), nil
	}
	return []byte(c), nil
}

// UnmarshalJSON keeps the JSON text.
func (c *Cost) UnmarshalJSON(b []byte) error {
	*c = Cost(b)
	return nil
}

// UsageOf is the usage of an LLM usage (the total, when the provider sent
// none, the sum of prompt and completion).
func UsageOf(u llm.Usage) Usage {
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: total}
}

// UsageOfRun is the usage of a run as the client asked for it: tokens,
// and the cost when asked (null when the model has no prices: unknown,
// never zero).
func (rr *RunRequest) UsageOfRun(res *agent.StatelessResult) Usage {
	u := UsageOf(res.Usage)
	if rr.IncludeCost {
		u.CostUSD = "null"
		if usd := pricing.ReportedUSD(res.CostNanos, res.UnpricedCalls); usd != nil {
			u.CostUSD = Cost(strconv.FormatFloat(*usd, 'f', -1, 64))
		}
	}
	return u
}

// ToolCallsOff reports tool_choice "none": the model must not call a tool,
// so a client tool call that a provider returns anyway is dropped (never
// sent as tool_calls, which the client would run) and the answer ends
// with finish_reason "stop".
func (rr *RunRequest) ToolCallsOff() bool {
	s, _ := rr.Req.ToolChoice.(string)
	return s == "none"
}

// ClientCalls are the client tool calls a successful run answers and its
// finish reason: none of them, and "stop" for "tool_calls", when
// ToolCallsOff. dropped reports calls (or a tool_calls finish) the model
// made despite tool_choice "none", which the caller logs.
func (rr *RunRequest) ClientCalls(res *agent.StatelessResult) (calls []openai.ToolCall, finish string, dropped bool) {
	if !rr.ToolCallsOff() {
		return res.ClientToolCalls, res.FinishReason, false
	}
	finish = res.FinishReason
	if len(res.ClientToolCalls) > 0 || finish == string(openai.FinishReasonToolCalls) {
		return nil, string(openai.FinishReasonStop), true
	}
	return nil, finish, false
}

// NewCompletionID returns a new chat completion id.
func NewCompletionID() string { return "chatcmpl-" + rand.Text() }

// Wire types of chat.completion.chunk and chat.completion.
type (
	// Chunk is a chat.completion.chunk.
	Chunk struct {
		ID      string        `json:"id"`
		Object  string        `json:"object"`
		Created int64         `json:"created"`
		Model   string        `json:"model"`
		Choices []ChunkChoice `json:"choices"`
		// Usage is null on every chunk but the usage chunk when the client
		// asked for usage, absent otherwise (as OpenAI does).
		Usage json.RawMessage `json:"usage,omitempty"`
	}
	// ChunkChoice is the one choice of a chunk.
	ChunkChoice struct {
		Index        int       `json:"index"`
		Delta        Delta     `json:"delta"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	// Delta is what a chunk adds to the message.
	Delta struct {
		Role             string          `json:"role,omitempty"`
		Content          *string         `json:"content,omitempty"`
		ReasoningContent string          `json:"reasoning_content,omitempty"`
		ToolCalls        []DeltaToolCall `json:"tool_calls,omitempty"`
	}
	// DeltaToolCall is a fragment of a tool call: the first with its id,
	// type and name, the next with more of its arguments.
	DeltaToolCall struct {
		Index    int           `json:"index"`
		ID       string        `json:"id,omitempty"`
		Type     string        `json:"type,omitempty"`
		Function DeltaFunction `json:"function"`
	}
	// DeltaFunction is the function of a tool call (or of a fragment).
	DeltaFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}

	// Completion is a chat.completion.
	Completion struct {
		ID      string             `json:"id"`
		Object  string             `json:"object"`
		Created int64              `json:"created"`
		Model   string             `json:"model"`
		Choices []CompletionChoice `json:"choices"`
		Usage   Usage              `json:"usage"`
	}
	// CompletionChoice is the one choice of a completion.
	CompletionChoice struct {
		Index        int           `json:"index"`
		Message      Answer        `json:"message"`
		Logprobs     *LogprobsBody `json:"logprobs"`
		FinishReason string        `json:"finish_reason"`
	}
	// LogprobsBody is choices[].logprobs: the content tokens' log
	// probabilities (refusal is always null: a refusal is content here).
	LogprobsBody struct {
		Content []llm.TokenLogProb `json:"content"`
		Refusal []llm.TokenLogProb `json:"refusal"`
	}
	// Answer is the assistant message of a completion.
	Answer struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent string     `json:"reasoning_content,omitempty"`
		Refusal          *string    `json:"refusal"`
		ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	}
	// ToolCall is a tool call of an Answer.
	ToolCall struct {
		ID       string        `json:"id"`
		Type     string        `json:"type"`
		Function DeltaFunction `json:"function"`
	}
)

// AnswerOf is the assistant message of a run that answered content, with
// reasoning and the client tool calls it ends with; content is null when
// empty and there are calls.
func AnswerOf(content, reasoning string, calls []openai.ToolCall) Answer {
	msg := Answer{Role: "assistant", ReasoningContent: reasoning}
	if content != "" || len(calls) == 0 {
		msg.Content = &content
	}
	for _, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Type: "function",
			Function: DeltaFunction{Name: c.Function.Name, Arguments: c.Function.Arguments}})
	}
	return msg
}

// ChunkHead is what every chunk of one stream carries: its id, creation
// time and model, and whether the client asked for usage.
type ChunkHead struct {
	ID           string
	Created      int64
	Model        string
	IncludeUsage bool
}

// Chunk is the chunk of h with delta d and, when not nil, the finish
// reason.
func (h ChunkHead) Chunk(d Delta, finish *string) Chunk {
	c := Chunk{ID: h.ID, Object: "chat.completion.chunk", Created: h.Created, Model: h.Model,
		Choices: []ChunkChoice{{Delta: d, FinishReason: finish}}}
	if h.IncludeUsage {
		c.Usage = json.RawMessage("null")
	}
	return c
}
