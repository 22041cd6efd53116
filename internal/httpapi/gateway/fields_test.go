package gateway_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"agentchat/internal/llm/llmtest"

	"github.com/openai/openai-go/v3"
)

// fieldCase is what happens to one Chat Completions request field.
type fieldCase struct {
	// value is the field's JSON value in the request.
	value string
	// forwarded checks the request the LLM saw (nil: not forwarded).
	forwarded func(r llmtest.Request) bool
	// refused is the param of the 400 (empty: not refused).
	refused string
	// ignored says why the field may be dropped: it does not change the
	// answer (empty: it must be forwarded or refused).
	ignored string
}

// chatCompletionFields is every field of the Chat Completions request (the
// official SDK's list, kept complete by TestEveryFieldForwardedOrRefused)
// and the extensions: each is forwarded to the model, refused with its
// param, or ignored because it does not change the answer.
var chatCompletionFields = map[string]fieldCase{
	"messages":              {value: `[{"role":"user","content":"hi"}]`, forwarded: func(r llmtest.Request) bool { return r.Messages[len(r.Messages)-1].Content == "hi" }},
	"model":                 {value: `"naked"`, ignored: "selects the agent (whose LLM configuration names the model)"},
	"agent_id":              {value: `"naked"`, ignored: "selects the agent"},
	"copilot_mode":          {value: `"teaching_assistant"`, ignored: "selects the gns3-copilot's mode (its system prompt and tools), not sent"},
	"stream":                {value: `false`, ignored: "the shape of the answer, not its content"},
	"stream_options":        {value: `{"include_usage":true}`, ignored: "the shape of the answer, not its content"},
	"temperature":           {value: `0.5`, forwarded: func(r llmtest.Request) bool { return r.Temperature != nil && *r.Temperature == 0.5 }},
	"top_p":                 {value: `0.9`, forwarded: func(r llmtest.Request) bool { return r.TopP != nil && *r.TopP > 0.89 && *r.TopP < 0.91 }},
	"seed":                  {value: `1234`, forwarded: func(r llmtest.Request) bool { return r.Seed != nil && *r.Seed == 1234 }},
	"presence_penalty":      {value: `0.5`, forwarded: func(r llmtest.Request) bool { return r.PresencePenalty != nil && *r.PresencePenalty == 0.5 }},
	"frequency_penalty":     {value: `-0.5`, forwarded: func(r llmtest.Request) bool { return r.FrequencyPenalty != nil && *r.FrequencyPenalty == -0.5 }},
	"logit_bias":            {value: `{"1639":-100}`, forwarded: func(r llmtest.Request) bool { return r.LogitBias["1639"] == -100 }},
	"logprobs":              {value: `true`, forwarded: func(r llmtest.Request) bool { return r.LogProbs }},
	"top_logprobs":          {value: `3`, forwarded: func(r llmtest.Request) bool { return r.TopLogProbs == 3 }},
	"max_completion_tokens": {value: `77`, forwarded: func(r llmtest.Request) bool { return r.MaxTokens == 77 || r.MaxCompletionTokens == 77 }},
	"max_tokens":            {value: `66`, forwarded: func(r llmtest.Request) bool { return r.MaxTokens == 66 || r.MaxCompletionTokens == 66 }},
	"stop":                  {value: `["END"]`, forwarded: func(r llmtest.Request) bool { return len(r.Stop) == 1 && r.Stop[0] == "END" }},
	"n":                     {value: `2`, refused: "n"},
	"response_format": {value: `{"type":"json_schema","json_schema":{"name":"city","strict":true,"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}}}`,
		forwarded: func(r llmtest.Request) bool {
			rf := r.ResponseFormat
			return rf != nil && rf.Type == "json_schema" && rf.JSONSchema.Name == "city" && rf.JSONSchema.Strict &&
				strings.Contains(string(rf.JSONSchema.Schema), `"required":["name"]`)
		}},
	"tools": {value: `[{"type":"function","function":{"name":"client_tool","parameters":{"type":"object","properties":{}}}}]`,
		forwarded: func(r llmtest.Request) bool {
			for _, t := range r.Tools {
				if t.Function != nil && t.Function.Name == "client_tool" {
					return true
				}
			}
			return false
		}},
	"tool_choice":            {value: `"none"`, forwarded: func(r llmtest.Request) bool { return string(r.ToolChoice) == `"none"` }},
	"parallel_tool_calls":    {value: `false`, forwarded: func(r llmtest.Request) bool { return r.ParallelToolCalls != nil && !*r.ParallelToolCalls }},
	"reasoning_effort":       {value: `"low"`, forwarded: func(r llmtest.Request) bool { return r.ReasoningEffort == "low" }},
	"verbosity":              {value: `"high"`, forwarded: func(r llmtest.Request) bool { return r.Verbosity == "high" }},
	"user":                   {value: `"end-user-7"`, forwarded: func(r llmtest.Request) bool { return r.User == "end-user-7" }},
	"audio":                  {value: `{"voice":"alloy","format":"mp3"}`, refused: "audio"},
	"modalities":             {value: `["text","audio"]`, refused: "modalities"},
	"functions":              {value: `[{"name":"f","parameters":{}}]`, refused: "functions"},
	"function_call":          {value: `"auto"`, refused: "function_call"},
	"web_search_options":     {value: `{}`, refused: "web_search_options"},
	"moderation":             {value: `{"input":{"policy":"x"}}`, refused: "moderation"},
	"store":                  {value: `true`, ignored: "OpenAI's storage of the completion; the answer is the same"},
	"metadata":               {value: `{"k":"v"}`, ignored: "tags for OpenAI's stored completions; the answer is the same"},
	"service_tier":           {value: `"auto"`, ignored: "the provider's latency tier; the answer is the same"},
	"prediction":             {value: `{"type":"content","content":"x"}`, ignored: "a latency hint: predicted outputs do not change the answer"},
	"prompt_cache_key":       {value: `"k"`, ignored: "a cache hint; the answer is the same"},
	"prompt_cache_retention": {value: `"24h"`, ignored: "a cache hint; the answer is the same"},
	"prompt_cache_options":   {value: `{}`, ignored: "a cache hint; the answer is the same"},
	"safety_identifier":      {value: `"s"`, ignored: "abuse monitoring; the answer is the same"},
}

// TestEveryFieldForwardedOrRefused walks every field of the Chat
// Completions request: each one is seen by the LLM or refused with a 400
// naming it; none that changes the answer is dropped.
func TestEveryFieldForwardedOrRefused(t *testing.T) {
	ty := reflect.TypeFor[openai.ChatCompletionNewParams]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if _, ok := chatCompletionFields[name]; !ok {
			t.Errorf("field %q of the Chat Completions request is not in the table: forward it, refuse it or say why it is ignored", name)
		}
	}
	e := newEnv(t, envOptions{})
	for name, fc := range chatCompletionFields {
		t.Run(name, func(t *testing.T) {
			if n := btoi(fc.forwarded != nil) + btoi(fc.refused != "") + btoi(fc.ignored != ""); n != 1 {
				t.Fatalf("field %s: exactly one of forwarded, refused, ignored", name)
			}
			body := map[string]json.RawMessage{"model": json.RawMessage(`"naked"`), "messages": json.RawMessage(`[{"role":"user","content":"hi"}]`)}
			switch name {
			case "top_logprobs":
				body["logprobs"] = json.RawMessage(`true`)
			case "tool_choice", "parallel_tool_calls":
				// Without tools they change nothing and are not sent.
				body["tools"] = json.RawMessage(chatCompletionFields["tools"].value)
			}
			body[name] = json.RawMessage(fc.value)
			before := len(e.llm.Requests())
			r := e.post("/v1/chat/completions", body)
			reqs := e.llm.Requests()
			switch {
			case fc.refused != "":
				got := checkError(t, r, http.StatusBadRequest, "invalid_request_error")
				if got.Error.Param == nil || *got.Error.Param != fc.refused {
					t.Fatalf("param %v, want %q (%s)", got.Error.Param, fc.refused, r.Body)
				}
				if len(reqs) != before {
					t.Fatal("a refused request reached the LLM")
				}
			default:
				if r.Status != http.StatusOK {
					t.Fatalf("status %d %s", r.Status, r.Body)
				}
				if len(reqs) == before {
					t.Fatal("the LLM saw no request")
				}
				if fc.forwarded != nil && !fc.forwarded(reqs[len(reqs)-1]) {
					t.Fatalf("%s not forwarded: the LLM saw %s", name, reqs[len(reqs)-1].Body)
				}
			}
		})
	}
}

// TestUnknownFieldsAccepted: clients send fields of their own.
func TestUnknownFieldsAccepted(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := e.post("/v1/chat/completions", map[string]any{"model": "naked", "messages": []any{map[string]any{"role": "user", "content": "hi"}},
		"x_client_extension": map[string]any{"a": 1}})
	if r.Status != http.StatusOK {
		t.Fatalf("status %d %s", r.Status, r.Body)
	}
}

// TestInvalidOptions: each option's bad value is a 400 naming it.
func TestInvalidOptions(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, tc := range []struct{ field, value, param string }{
		{"top_p", `1.5`, "top_p"},
		{"presence_penalty", `-3`, "presence_penalty"},
		{"frequency_penalty", `2.5`, "frequency_penalty"},
		{"logit_bias", `{"abc":1}`, "logit_bias"},
		{"logit_bias", `{"12":101}`, "logit_bias"},
		{"logit_bias", `{"12":1.5}`, "logit_bias"},
		{"top_logprobs", `3`, "top_logprobs"}, // without logprobs
		{"top_logprobs", `-1`, "top_logprobs"},
		{"response_format", `"json"`, "response_format"},
		{"response_format", `{"type":"xml"}`, "response_format.type"},
		{"response_format", `{"type":"json_schema"}`, "response_format.json_schema"},
		{"response_format", `{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}`, "response_format.json_schema.name"},
		{"response_format", `{"type":"json_schema","json_schema":{"name":"a","schema":[1]}}`, "response_format.json_schema.schema"},
		{"reasoning_effort", `"extreme"`, "reasoning_effort"},
		{"verbosity", `"loud"`, "verbosity"},
		{"user", `"` + strings.Repeat("u", 300) + `"`, "user"},
		{"modalities", `"text"`, "modalities"},
	} {
		body := map[string]json.RawMessage{"model": json.RawMessage(`"naked"`), "messages": json.RawMessage(`[{"role":"user","content":"hi"}]`),
			tc.field: json.RawMessage(tc.value)}
		r := e.post("/v1/chat/completions", body)
		got := checkError(t, r, http.StatusBadRequest, "invalid_request_error")
		if got.Error.Param == nil || *got.Error.Param != tc.param {
			t.Errorf("%s=%s: param %v, want %s (%s)", tc.field, tc.value, got.Error.Param, tc.param, r.Body)
		}
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("%d invalid requests reached the LLM", n)
	}
	// modalities ["text"] is the default and accepted.
	r := e.post("/v1/chat/completions", map[string]any{"model": "naked", "messages": []any{map[string]any{"role": "user", "content": "hi"}}, "modalities": []string{"text"}})
	if r.Status != http.StatusOK {
		t.Fatalf("modalities text: %d %s", r.Status, r.Body)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
