package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"agentchat/internal/llm/llmtest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// citySchema is a strict JSON schema, written as a plain map (no Zod).
var citySchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city":       map[string]any{"type": "string"},
		"population": map[string]any{"type": "integer", "minimum": 1},
	},
	"required":             []string{"city", "population"},
	"additionalProperties": false,
}

func cityFormat() openai.ChatCompletionNewParamsResponseFormatUnion {
	return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "city", Strict: openai.Bool(true), Schema: citySchema},
	}}
}

// TestSDKStructuredOutput: the official SDK's strict json_schema reaches
// the model and the answer is the model's JSON, streamed and not; on an
// agent with tools it shapes the final answer after a tool step.
func TestSDKStructuredOutput(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.sdk(e.api.Token("alice"))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:          "naked",
		Messages:       []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Largest city of France?")},
		ResponseFormat: cityFormat(),
	}
	type city struct {
		City       string `json:"city"`
		Population int    `json:"population"`
	}

	// Non-streamed: the scripted model answers a minimal conforming
	// instance of the schema it was sent.
	got, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var v city
	if err := json.Unmarshal([]byte(got.Choices[0].Message.Content), &v); err != nil || v.Population != 1 {
		t.Fatalf("content %q: %v", got.Choices[0].Message.Content, err)
	}
	rf := e.llm.Requests()[0].ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema.Name != "city" || !rf.JSONSchema.Strict {
		t.Fatalf("response_format not forwarded: %s", e.llm.Requests()[0].Body)
	}
	var sent map[string]any
	if err := json.Unmarshal(rf.JSONSchema.Schema, &sent); err != nil || sent["additionalProperties"] != false {
		t.Fatalf("schema %s", rf.JSONSchema.Schema)
	}

	// Streamed, with the model's own JSON.
	e.llm.Enqueue(llmtest.Reply{JSON: `{"city":"Paris","population":2102650}`})
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(acc.Choices[0].Message.Content), &v); err != nil || v != (city{"Paris", 2102650}) {
		t.Fatalf("streamed content %q: %v", acc.Choices[0].Message.Content, err)
	}

	// An agent with tools: the tool step, then the final answer in the
	// schema; response_format went with every call.
	e.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_search", Name: "search_media", Arguments: `{"query":"Dune"}`}}},
		llmtest.Reply{JSON: `{"city":"Arrakeen","population":5}`},
	)
	before := len(e.llm.Requests())
	params.Model = "media-agent"
	got, err = c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != `{"city":"Arrakeen","population":5}` {
		t.Fatalf("final answer %q", got.Choices[0].Message.Content)
	}
	for _, r := range e.llm.Requests()[before:] {
		if !r.WantsJSON() || len(r.Tools) == 0 {
			t.Fatalf("call without response_format or tools: %s", r.Body)
		}
	}

	// json_object too.
	e.llm.Enqueue(llmtest.Reply{JSON: `{"ok":true}`})
	got, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "naked", Messages: params.Messages,
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	})
	if err != nil || got.Choices[0].Message.Content != `{"ok":true}` {
		t.Fatalf("json_object: %v %v", got, err)
	}
}

// TestSDKLogprobs: logprobs and top_logprobs come back as the model sent
// them, in the message and in every content chunk.
func TestSDKLogprobs(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.sdk(e.api.Token("alice"))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:       "naked",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		Logprobs:    openai.Bool(true),
		TopLogprobs: openai.Int(2),
		Seed:        openai.Int(99),
	}
	e.llm.Enqueue(llmtest.Reply{Text: "Hello there"})
	got, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	lp := got.Choices[0].Logprobs.Content
	if len(lp) != 2 || lp[0].Token != "Hello" || lp[0].Logprob != llmtest.LogProb(99, 0, "Hello") ||
		lp[1].Token != " there" || len(lp[1].TopLogprobs) != 2 || len(lp[0].Bytes) != 5 {
		t.Fatalf("logprobs %s", got.Choices[0].Logprobs.RawJSON())
	}
	if r := e.llm.Requests()[0]; !r.LogProbs || r.TopLogProbs != 2 || r.Seed == nil || *r.Seed != 99 {
		t.Fatalf("request %s", r.Body)
	}

	e.llm.Enqueue(llmtest.Reply{Text: "Hello there", LogProbs: []float64{-0.25, -1.5}})
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var tokens []string
	var values []float64
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			for _, l := range ch.Logprobs.Content {
				if ch.Delta.Content != l.Token {
					t.Fatalf("chunk content %q with logprob of %q", ch.Delta.Content, l.Token)
				}
				tokens, values = append(tokens, l.Token), append(values, l.Logprob)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 || values[0] != -0.25 || values[1] != -1.5 {
		t.Fatalf("streamed logprobs %v %v", tokens, values)
	}

	// Without logprobs, none.
	got, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "naked", Messages: params.Messages})
	if err != nil || got.Choices[0].Logprobs.RawJSON() != "null" && len(got.Choices[0].Logprobs.Content) != 0 {
		t.Fatalf("logprobs without asking: %v %v", got, err)
	}
}

// TestSDKProviderRefusesField: a provider's 400 naming a field reaches the
// client as an OpenAI error with that param, before the stream and inside
// it.
func TestSDKProviderRefusesField(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.sdk(e.api.Token("alice"))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "naked", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		ResponseFormat: cityFormat()}

	e.llm.Enqueue(llmtest.Reply{Status: 400, Error: "response_format json_schema is not supported by this model", ErrorParam: "response_format"})
	_, err := c.Chat.Completions.New(ctx, params)
	ae := apiError(t, err)
	if ae.StatusCode != http.StatusBadRequest || ae.Param != "response_format" || ae.Type != "invalid_request_error" {
		t.Fatalf("before the stream: %d %s", ae.StatusCode, ae.RawJSON())
	}

	e.llm.Enqueue(llmtest.Reply{Text: "a b c", StreamError: "seed is not supported", StreamErrorType: "invalid_request_error",
		StreamErrorParam: "seed", StreamErrorAfter: 2})
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	for stream.Next() {
	}
	var se *ssestream.StreamError
	if !errors.As(stream.Err(), &se) {
		t.Fatalf("inside the stream: %v", stream.Err())
	}
	var body openAIError
	if err := json.Unmarshal(se.Event.Data, &body); err != nil || body.Error == nil || body.Error.Param == nil ||
		*body.Error.Param != "seed" || body.Error.Type != "invalid_request_error" {
		t.Fatalf("inside the stream: %s", se.Event.Data)
	}
}

// TestChatRoutesAcceptOptions: /v1/chat and /v1/chat/sync forward the
// model options and refuse what they cannot honour.
func TestChatRoutesAcceptOptions(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := e.post("/v1/chat/sync", map[string]any{"agent_id": "naked", "message": "hi", "seed": 5, "top_p": 0.5,
		"response_format": map[string]any{"type": "json_object"}, "max_completion_tokens": 20, "user": "u"})
	if r.Status != http.StatusOK {
		t.Fatalf("sync: %d %s", r.Status, r.Body)
	}
	got := e.llm.Requests()[0]
	if got.Seed == nil || *got.Seed != 5 || got.TopP == nil || !got.WantsJSON() || got.MaxTokens != 20 || got.User != "u" {
		t.Fatalf("sync request %s", got.Body)
	}
	r = e.post("/v1/chat", map[string]any{"agent_id": "naked", "message": "hi", "presence_penalty": 1})
	if r.Status != http.StatusOK || *e.llm.Requests()[1].PresencePenalty != 1 {
		t.Fatalf("chat: %d %s", r.Status, r.Body)
	}
	for field, value := range map[string]any{"logprobs": true, "top_logprobs": 2, "tools": []any{}, "tool_choice": "auto", "n": 2,
		"audio": map[string]any{}, "top_p": 3} {
		for _, path := range []string{"/v1/chat", "/v1/chat/sync"} {
			r := e.post(path, map[string]any{"agent_id": "naked", "message": "hi", field: value})
			body := checkError(t, r, http.StatusBadRequest, "invalid_request_error")
			if body.Error.Param == nil || *body.Error.Param != field {
				t.Errorf("%s %s: %s", path, field, r.Body)
			}
		}
	}
}
