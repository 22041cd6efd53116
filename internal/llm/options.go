package llm

import (
	"math"

	openai "github.com/sashabaranov/go-openai"
)

// Options are the request settings a client may ask for beyond the
// messages, tools and bounds of Request, sent as they are on every call
// (zero values: not sent, the provider's default). They change the answer,
// so a surface that accepts them must forward them, never drop them.
type Options struct {
	// TopP is top_p (nucleus sampling), 0..1.
	TopP *float32
	// Seed is seed (best-effort deterministic sampling).
	Seed *int
	// PresencePenalty and FrequencyPenalty are -2..2 (0 is the default
	// and is not sent).
	PresencePenalty  *float32
	FrequencyPenalty *float32
	// LogitBias maps token ids to a bias of -100..100.
	LogitBias map[string]int
	// LogProbs asks for the log probability of every output token (see
	// Delta.LogProbs and Result.LogProbs); TopLogProbs (0..20) for that
	// many alternatives at each position.
	LogProbs    bool
	TopLogProbs int
	// ResponseFormat is response_format (text, json_object or
	// json_schema). With tools it is sent too: OpenAI applies it to the
	// content of the answer, never to tool calls.
	ResponseFormat *openai.ChatCompletionResponseFormat
	// ParallelToolCalls is parallel_tool_calls; sent only with tools (OpenAI
	// refuses it without).
	ParallelToolCalls *bool
	// ReasoningEffort is reasoning_effort (minimal, low, medium, high...).
	ReasoningEffort string
	// Verbosity is verbosity (low, medium, high).
	Verbosity string
	// User is user, the end user's id for the provider's abuse monitoring.
	User string
}

// TokenLogProb is the log probability of one output token, as OpenAI
// sends it in choices[].logprobs.content[] (logprob always present, bytes
// null when the server sends none).
type TokenLogProb struct {
	Token       string       `json:"token"`
	LogProb     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogProbs []TopLogProb `json:"top_logprobs"`
}

// TopLogProb is one alternative of a TokenLogProb.
type TopLogProb struct {
	Token   string  `json:"token"`
	LogProb float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// streamLogProbs is choices[].logprobs of a chunk or a completion.
type streamLogProbs struct {
	Content []TokenLogProb `json:"content"`
	Refusal []TokenLogProb `json:"refusal"`
}

// applyOptions copies o into the go-openai request.
func applyOptions(r *openai.ChatCompletionRequest, o *Options) {
	if o.TopP != nil {
		r.TopP = *o.TopP
		if r.TopP == 0 {
			// go-openai omits a zero; as for temperature, send
			// (practically) zero.
			r.TopP = math.SmallestNonzeroFloat32
		}
	}
	r.Seed = o.Seed
	if o.PresencePenalty != nil {
		r.PresencePenalty = *o.PresencePenalty
	}
	if o.FrequencyPenalty != nil {
		r.FrequencyPenalty = *o.FrequencyPenalty
	}
	if len(o.LogitBias) > 0 {
		r.LogitBias = o.LogitBias
	}
	r.LogProbs = o.LogProbs
	if o.LogProbs {
		r.TopLogProbs = o.TopLogProbs
	}
	r.ResponseFormat = o.ResponseFormat
	if o.ParallelToolCalls != nil && len(r.Tools) > 0 {
		r.ParallelToolCalls = *o.ParallelToolCalls
	}
	r.ReasoningEffort = o.ReasoningEffort
	r.Verbosity = o.Verbosity
	r.User = o.User
}

// tokenLogProb converts go-openai's non-streamed log probability.
func tokenLogProb(t openai.LogProb) TokenLogProb {
	out := TokenLogProb{Token: t.Token, LogProb: t.LogProb, Bytes: bytesOf(t.Bytes)}
	for _, alt := range t.TopLogProbs {
		out.TopLogProbs = append(out.TopLogProbs, TopLogProb{Token: alt.Token, LogProb: alt.LogProb, Bytes: bytesOf(alt.Bytes)})
	}
	if out.TopLogProbs == nil {
		out.TopLogProbs = []TopLogProb{}
	}
	return out
}

func bytesOf(b []byte) []int {
	if b == nil {
		return nil
	}
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}
