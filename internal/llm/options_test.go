package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

// TestOptionsForwarded: every option reaches the server, streamed and not,
// and the answer honours response_format and logprobs.
func TestOptionsForwarded(t *testing.T) {
	f := func(v float32) *float32 { return &v }
	seed := 42
	par := false
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)
	opts := llm.Options{
		TopP: f(0), Seed: &seed, PresencePenalty: f(0.5), FrequencyPenalty: f(-0.5),
		LogitBias: map[string]int{"1639": 6}, LogProbs: true, TopLogProbs: 2,
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "out", Strict: true, Schema: schema}},
		ParallelToolCalls: &par, ReasoningEffort: "low", Verbosity: "high", User: "u-1",
	}
	for _, stream := range []bool{true, false} {
		srv := llmtest.NewServer(t)
		c := newClient(t, srv.BaseURL(), nil)
		req := userMsg("hi")
		req.Options = opts
		req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "t", Parameters: json.RawMessage(`{}`)}}}
		var res *llm.Result
		var err error
		var deltaLPs int
		if stream {
			res, err = c.Stream(context.Background(), req, func(d llm.Delta) error {
				deltaLPs += len(d.LogProbs)
				return nil
			})
		} else {
			res, err = c.Complete(context.Background(), req)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()[0]
		if got.TopP == nil || *got.TopP <= 0 || *got.TopP > 1e-30 || *got.Seed != 42 || *got.PresencePenalty != 0.5 ||
			*got.FrequencyPenalty != -0.5 || got.LogitBias["1639"] != 6 || !got.LogProbs || got.TopLogProbs != 2 ||
			got.ParallelToolCalls == nil || *got.ParallelToolCalls || got.ReasoningEffort != "low" ||
			got.Verbosity != "high" || got.User != "u-1" || got.ResponseFormat == nil ||
			got.ResponseFormat.JSONSchema.Name != "out" || !got.ResponseFormat.JSONSchema.Strict {
			t.Fatalf("stream=%v: request %s", stream, got.Body)
		}
		if res.Content != `{"a":""}` {
			t.Fatalf("stream=%v: content %q", stream, res.Content)
		}
		if len(res.LogProbs) == 0 || (stream && deltaLPs != len(res.LogProbs)) {
			t.Fatalf("stream=%v: logprobs %d (deltas %d)", stream, len(res.LogProbs), deltaLPs)
		}
		if res.LogProbs[0].LogProb != llmtest.LogProb(42, 0, res.LogProbs[0].Token) || len(res.LogProbs[0].TopLogProbs) != 2 {
			t.Fatalf("stream=%v: logprob %+v", stream, res.LogProbs[0])
		}
	}
}

// TestParallelToolCallsNeedTools: parallel_tool_calls is not sent without
// tools (OpenAI refuses it then).
func TestParallelToolCallsNeedTools(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := newClient(t, srv.BaseURL(), nil)
	par := true
	req := userMsg("hi")
	req.Options.ParallelToolCalls = &par
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if srv.Requests()[0].ParallelToolCalls != nil {
		t.Fatalf("sent %s", srv.Requests()[0].Body)
	}
}

// TestProviderParamError: a provider's refusal of a field, before or
// inside the stream, is a bad request naming its param.
func TestProviderParamError(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"status": {Status: 400, Error: "Invalid value for 'seed'.", ErrorParam: "seed"},
		"stream": {StreamError: "Invalid value for 'seed'.", StreamErrorType: "invalid_request_error", StreamErrorParam: "seed"},
	} {
		srv := llmtest.NewServer(t)
		srv.Enqueue(reply)
		c := newClient(t, srv.BaseURL(), nil)
		_, err := c.Stream(context.Background(), userMsg("hi"), nil)
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != llm.KindBadRequest || le.Param != "seed" {
			t.Fatalf("%s: %#v", name, err)
		}
	}
}

// TestCachedTokens: prompt_tokens_details.cached_tokens is reported.
func TestCachedTokens(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "x", Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 1, CachedTokens: 6}})
	c := newClient(t, srv.BaseURL(), nil)
	res, err := c.Stream(context.Background(), userMsg("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.CachedTokens != 6 {
		t.Fatalf("usage %+v", res.Usage)
	}
}
