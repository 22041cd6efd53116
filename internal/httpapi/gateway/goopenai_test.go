package gateway_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/llm/llmtest"

	goopenai "github.com/sashabaranov/go-openai"
)

// goClient returns a sashabaranov/go-openai client of the server.
func (e *env) goClient(apiKey string) *goopenai.Client {
	cfg := goopenai.DefaultConfig(apiKey)
	cfg.BaseURL = e.base
	cfg.HTTPClient = e.api.Server.Client()
	return goopenai.NewClientWithConfig(cfg)
}

// TestGoOpenAIClient runs the second client library against the gateway:
// models, streaming with usage, a client tool call, non-streaming, errors.
func TestGoOpenAIClient(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	c := e.goClient(e.api.APIKey("alice"))

	models, err := c.ListModels(ctx)
	if err != nil || len(models.Models) != 3 || models.Models[1].ID != "media-agent" {
		t.Fatalf("models = %+v %v", models, err)
	}
	if _, err := c.GetModel(ctx, "naked"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetModel(ctx, "nope")
	var ae *goopenai.APIError
	if !errors.As(err, &ae) || ae.HTTPStatusCode != http.StatusNotFound || ae.Type != "not_found_error" {
		t.Fatalf("unknown model: %v", err)
	}

	e.llm.Enqueue(llmtest.Reply{Text: "Streaming works fine.", Usage: &llmtest.Usage{PromptTokens: 3, CompletionTokens: 4}})
	s, err := c.CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{
		Model:         "naked",
		Messages:      []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		Stream:        true,
		StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var usage *goopenai.Usage
	ids := map[string]bool{}
	for {
		ch, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids[ch.ID] = true
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, choice := range ch.Choices {
			text.WriteString(choice.Delta.Content)
		}
	}
	s.Close()
	if text.String() != "Streaming works fine." || usage == nil || usage.TotalTokens != 7 || len(ids) != 1 {
		t.Fatalf("text %q usage %+v ids %v", text.String(), usage, ids)
	}

	e.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"x"}`}}})
	s, err = c.CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{
		Model:    "naked",
		Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "look it up"}},
		Tools: []goopenai.Tool{{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: "lookup", Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}},
		Stream: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var args strings.Builder
	var id, name, finish string
	for {
		ch, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, choice := range ch.Choices {
			for _, tc := range choice.Delta.ToolCalls {
				if tc.Index == nil || *tc.Index != 0 {
					t.Fatalf("tool call delta without index 0: %+v", tc)
				}
				id += tc.ID
				name += tc.Function.Name
				args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finish = string(choice.FinishReason)
			}
		}
	}
	s.Close()
	if id != "call_1" || name != "lookup" || args.String() != `{"q":"x"}` || finish != "tool_calls" {
		t.Fatalf("tool call id %q name %q args %q finish %q", id, name, args.String(), finish)
	}

	e.llm.Enqueue(llmtest.Reply{Text: "Plain answer.", Usage: &llmtest.Usage{PromptTokens: 1, CompletionTokens: 2}})
	resp, err := c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{
		Model:    "media-agent",
		Messages: []goopenai.ChatCompletionMessage{{Role: "user", MultiContent: []goopenai.ChatMessagePart{{Type: "text", Text: "hello"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Plain answer." || resp.Usage.TotalTokens != 3 || resp.Model != "media-agent" {
		t.Fatalf("completion = %+v", resp)
	}

	e.llm.Enqueue(llmtest.Reply{Text: "a b c d", StreamError: "kaput", StreamErrorAfter: 2})
	s, err = c.CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{Model: "naked", Stream: true,
		Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = s.Recv()
		if err != nil {
			break
		}
	}
	s.Close()
	if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "The LLM provider failed") {
		t.Fatalf("mid-stream error = %v", err)
	}

	bad := e.goClient("ack_" + strings.Repeat("B", 43))
	_, err = bad.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "naked", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
	if !errors.As(err, &ae) || ae.HTTPStatusCode != http.StatusUnauthorized || ae.Type != "authentication_error" {
		t.Fatalf("bad key: %v", err)
	}
}
