package openaiwire

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/idsyntax"
	"agentchat/internal/llm"

	openai "github.com/sashabaranov/go-openai"
)

// Limits of the model options.
const (
	// MaxTopLogprobs is the largest top_logprobs (OpenAI's limit).
	MaxTopLogprobs = 20
	// MaxLogitBias bounds the entries of logit_bias.
	MaxLogitBias = 1024
	// maxUserLen bounds user.
	maxUserLen = 256
)

// ModelOptions are the Chat Completions fields that change the model's
// answer beyond the messages, tools and bounds: each is validated and
// forwarded on every LLM call of the run (see llm.Options), never dropped.
// README.md has the table of every field.
type ModelOptions struct {
	TopP             *float64           `json:"top_p"`
	Seed             *int64             `json:"seed"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	LogitBias        map[string]float64 `json:"logit_bias"`
	Logprobs         *bool              `json:"logprobs"`
	TopLogprobs      *int64             `json:"top_logprobs"`
	// ResponseFormat is {"type":"text"}, {"type":"json_object"} or
	// {"type":"json_schema","json_schema":{"name":...,"schema":{...},"strict":true}}.
	ResponseFormat    json.RawMessage `json:"response_format"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	ReasoningEffort   *string         `json:"reasoning_effort"`
	Verbosity         *string         `json:"verbosity"`
	User              *string         `json:"user"`
}

// Unsupported are the Chat Completions fields that would change the
// answer but cannot be honoured here: any of them set is refused with a
// 400 naming it.
type Unsupported struct {
	Audio            json.RawMessage `json:"audio"`
	Modalities       json.RawMessage `json:"modalities"`
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Moderation       json.RawMessage `json:"moderation"`
}

// set reports whether a raw field is present and not null.
func set(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// check refuses the fields of u that are set.
func (u *Unsupported) check() error {
	switch {
	case set(u.Audio):
		return openaierr.Invalid("audio", "'audio' output is not supported: the agents answer in text.")
	case set(u.Modalities):
		var mods []string
		if err := json.Unmarshal(u.Modalities, &mods); err != nil {
			return openaierr.Invalid("modalities", "'modalities' must be an array of strings.")
		}
		for _, m := range mods {
			if m != "text" {
				return openaierr.Invalid("modalities", "Modality %q is not supported: the agents answer in text (use [\"text\"]).", clip(m, 32))
			}
		}
	case set(u.Functions):
		return openaierr.Invalid("functions", "'functions' (deprecated) is not supported: declare them in 'tools'.")
	case set(u.FunctionCall):
		return openaierr.Invalid("function_call", "'function_call' (deprecated) is not supported: use 'tool_choice'.")
	case set(u.WebSearchOptions):
		return openaierr.Invalid("web_search_options", "'web_search_options' is not supported: the agents search with their own tools.")
	case set(u.Moderation):
		return openaierr.Invalid("moderation", "'moderation' is not supported here.")
	}
	return nil
}

// digits are the bytes of a token id (1 to 10 of them).
var digits = idsyntax.NewSet(false, "0123456789")

// Allowed values of reasoning_effort and verbosity.
var (
	reasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
	verbosities      = []string{"low", "medium", "high"}
)

// convert validates o into the llm.Options sent on every call.
func (o *ModelOptions) convert() (llm.Options, error) {
	var out llm.Options
	var err error
	if out.TopP, err = rangeOpt("top_p", o.TopP, 0, 1); err != nil {
		return out, err
	}
	if out.PresencePenalty, err = rangeOpt("presence_penalty", o.PresencePenalty, -2, 2); err != nil {
		return out, err
	}
	if out.FrequencyPenalty, err = rangeOpt("frequency_penalty", o.FrequencyPenalty, -2, 2); err != nil {
		return out, err
	}
	if o.Seed != nil {
		s := int(*o.Seed)
		out.Seed = &s
	}
	if out.LogitBias, err = logitBias(o.LogitBias); err != nil {
		return out, err
	}
	out.LogProbs = o.Logprobs != nil && *o.Logprobs
	if n := o.TopLogprobs; n != nil {
		switch {
		case *n < 0 || *n > MaxTopLogprobs:
			return out, openaierr.Invalid("top_logprobs", "'top_logprobs' must be between 0 and %d (got %d).", MaxTopLogprobs, *n)
		case *n > 0 && !out.LogProbs:
			return out, openaierr.Invalid("top_logprobs", "'top_logprobs' requires 'logprobs' to be true.")
		}
		out.TopLogProbs = int(*n)
	}
	if out.ResponseFormat, err = responseFormat(o.ResponseFormat); err != nil {
		return out, err
	}
	out.ParallelToolCalls = o.ParallelToolCalls
	if out.ReasoningEffort, err = oneOf("reasoning_effort", o.ReasoningEffort, reasoningEfforts); err != nil {
		return out, err
	}
	if out.Verbosity, err = oneOf("verbosity", o.Verbosity, verbosities); err != nil {
		return out, err
	}
	if o.User != nil {
		if len(*o.User) > maxUserLen {
			return out, openaierr.Invalid("user", "'user' must be at most %d bytes (got %d).", maxUserLen, len(*o.User))
		}
		out.User = *o.User
	}
	return out, nil
}

// rangeOpt checks an optional number in [lo, hi].
func rangeOpt(param string, v *float64, lo, hi float64) (*float32, error) {
	if v == nil {
		return nil, nil
	}
	if math.IsNaN(*v) || *v < lo || *v > hi {
		return nil, openaierr.Invalid(param, "'%s' must be between %g and %g (got %g).", param, lo, hi, *v)
	}
	f := float32(*v)
	return &f, nil
}

// oneOf checks an optional string against its allowed values.
func oneOf(param string, v *string, allowed []string) (string, error) {
	if v == nil || *v == "" {
		return "", nil
	}
	for _, a := range allowed {
		if *v == a {
			return a, nil
		}
	}
	return "", openaierr.Invalid(param, "Invalid value for '%s': %q (want one of %s).", param, clip(*v, 32), strings.Join(allowed, ", "))
}

// logitBias checks token ids and integral biases in [-100, 100].
func logitBias(in map[string]float64) (map[string]int, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxLogitBias {
		return nil, openaierr.Invalid("logit_bias", "'logit_bias' accepts at most %d tokens (got %d).", MaxLogitBias, len(in))
	}
	out := make(map[string]int, len(in))
	for k, v := range in {
		if !digits.All(k, 1, 10) {
			return nil, openaierr.Invalid("logit_bias", "'logit_bias' keys must be token ids (got %q).", clip(k, 32))
		}
		if v != math.Trunc(v) || v < -100 || v > 100 {
			return nil, openaierr.Invalid("logit_bias", "'logit_bias' values must be integers between -100 and 100 (got %s for %s).",
				strconv.FormatFloat(v, 'g', -1, 64), k)
		}
		out[k] = int(v)
	}
	return out, nil
}

// responseFormatSpec is a response_format as sent.
type responseFormatSpec struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	} `json:"json_schema"`
}

// responseFormat validates response_format: null, text, json_object or
// json_schema with a name and an object schema.
func responseFormat(raw json.RawMessage) (*openai.ChatCompletionResponseFormat, error) {
	if !set(raw) {
		return nil, nil
	}
	var spec responseFormatSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, openaierr.Invalid("response_format", "'response_format' must be an object such as {\"type\":\"json_object\"}.")
	}
	switch spec.Type {
	case "text":
		return &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeText}, nil
	case "json_object":
		return &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}, nil
	case "json_schema":
	case "":
		return nil, openaierr.Invalid("response_format.type", "'response_format.type' is required.")
	default:
		return nil, openaierr.Invalid("response_format.type", "Invalid value for 'response_format.type': %q (want text, json_object or json_schema).", clip(spec.Type, 32))
	}
	js := spec.JSONSchema
	switch {
	case js == nil:
		return nil, openaierr.Invalid("response_format.json_schema", "'response_format.json_schema' is required for type 'json_schema'.")
	case !nameChars.All(js.Name, 1, 64):
		return nil, openaierr.Invalid("response_format.json_schema.name", "'response_format.json_schema.name' must be 1 to 64 letters, digits, '_' or '-'.")
	}
	out := &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: js.Name, Description: js.Description}}
	if js.Strict != nil {
		out.JSONSchema.Strict = *js.Strict
	}
	schema := bytes.TrimSpace(js.Schema)
	switch {
	case len(schema) == 0 || string(schema) == "null":
		schema = emptySchema
	case schema[0] != '{':
		return nil, openaierr.Invalid("response_format.json_schema.schema", "'response_format.json_schema.schema' must be a JSON Schema object.")
	}
	out.JSONSchema.Schema = json.RawMessage(schema)
	return out, nil
}
