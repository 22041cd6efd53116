package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/seerr/seerrtest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// sdk returns an official OpenAI SDK client of the server, as a user would
// configure it: base URL …/v1 and an API key (no retries, so that each
// status is seen as answered).
func (e *env) sdk(apiKey string) *openai.Client {
	c := openai.NewClient(
		option.WithBaseURL(e.base+"/"),
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(e.api.Server.Client()),
	)
	return &c
}

// createKey creates an API key of alice through the API, with her JWT.
func (e *env) createKey(t *testing.T, body any) apikeys.KeyCreated {
	t.Helper()
	r := e.api.As("alice", http.MethodPost, "/v3/access/users/me/api-keys", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	var k apikeys.KeyCreated
	r.JSON(t, &k)
	return k
}

func apiError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *openai.Error", err, err)
	}
	return ae
}

// TestAcceptanceMediaAgent is the acceptance scenario: an OpenAI SDK with
// base URL …/v1 and an API key lists the agents as models and streams a
// completion from media-agent that searches and requests a title through
// Seerr, with usage.
func TestAcceptanceMediaAgent(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.createKey(t, map[string]any{"name": "sdk"})
	c := e.sdk(key.Key)
	ctx := context.Background()

	page, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		if m.Object != "model" || m.OwnedBy != "agentchat" || m.Created == 0 {
			t.Fatalf("model entry %+v", m)
		}
		ids = append(ids, m.ID)
	}
	if want := []string{"gns3-copilot", "media-agent", "naked"}; !slices.Equal(ids, want) {
		t.Fatalf("models = %v, want %v", ids, want)
	}
	m, err := c.Models.Get(ctx, "media-agent")
	if err != nil || m.ID != "media-agent" {
		t.Fatalf("get model: %+v %v", m, err)
	}

	e.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_search", Name: "search_media", Arguments: `{"query":"Dune"}`}},
			Usage: &llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_request", Name: "request_media", Arguments: `{"media_type":"movie","tmdb_id":438631}`}},
			Usage: &llmtest.Usage{PromptTokens: 200, CompletionTokens: 20}},
		llmtest.Reply{Text: "Done: I requested Dune (2021) for you.", Usage: &llmtest.Usage{PromptTokens: 300, CompletionTokens: 30}},
	)
	var resp *http.Response
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "media-agent",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Please request the movie Dune.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, option.WithResponseInto(&resp))
	acc := openai.ChatCompletionAccumulator{}
	var reasoning strings.Builder
	n := 0
	for stream.Next() {
		ch := stream.Current()
		if !acc.AddChunk(ch) {
			t.Fatalf("accumulator refused chunk %d: %s", n, ch.RawJSON())
		}
		n++
		for _, choice := range ch.Choices {
			if len(choice.Delta.ToolCalls) > 0 {
				t.Fatalf("agent tool activity sent as tool_calls: %s", ch.RawJSON())
			}
			if f, ok := choice.Delta.JSON.ExtraFields["reasoning_content"]; ok {
				var s string
				if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil {
					t.Fatal(err)
				}
				reasoning.WriteString(s)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "Done: I requested Dune (2021) for you." {
		t.Fatalf("content = %q", got)
	}
	if acc.Choices[0].FinishReason != "stop" || len(acc.Choices[0].Message.ToolCalls) != 0 || acc.Model != "media-agent" {
		t.Fatalf("completion = %+v", acc.ChatCompletion)
	}
	if u := acc.Usage; u.PromptTokens != 600 || u.CompletionTokens != 60 || u.TotalTokens != 660 {
		t.Fatalf("usage = %+v, want 600/60/660", u)
	}
	r := reasoning.String()
	for _, want := range []string{`Calling search_media {"query":"Dune"}`, "search_media → ", "Calling request_media", "request_media → "} {
		if !strings.Contains(r, want) {
			t.Fatalf("reasoning %q lacks %q", r, want)
		}
	}
	if resp == nil || resp.Header.Get("X-Should-Retry") != "false" || resp.Header.Get("X-Agent-Id") != "media-agent" {
		t.Fatalf("headers = %v", resp)
	}

	created := e.seerr.Created()
	if len(created) != 1 || created[0].TMDBID != seerrtest.Dune || created[0].MediaType != "movie" {
		t.Fatalf("seerr requests = %+v", created)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("llm requests = %d", len(reqs))
	}
	if last := reqs[2].Messages; len(last) != 6 || last[3].Role != "tool" || last[5].Role != "tool" || last[5].ToolCallID != "call_request" {
		t.Fatalf("third prompt = %+v", last)
	}
}

func TestSDKNonStreaming(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.sdk(e.api.Token("alice"))
	e.llm.Enqueue(llmtest.Reply{Text: "Paris is the capital of France.", Usage: &llmtest.Usage{PromptTokens: 12, CompletionTokens: 7}})
	var resp *http.Response
	got, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:       "naked",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Capital of France?")},
		Temperature: openai.Float(0.2),
		MaxTokens:   openai.Int(50),
		Stop:        openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", "STOP"}},
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if got.Object != "chat.completion" || !strings.HasPrefix(got.ID, "chatcmpl-") || got.Model != "naked" || got.Created == 0 {
		t.Fatalf("completion = %s", got.RawJSON())
	}
	if len(got.Choices) != 1 || got.Choices[0].Message.Content != "Paris is the capital of France." ||
		got.Choices[0].FinishReason != "stop" || got.Choices[0].Message.Role != "assistant" {
		t.Fatalf("choices = %s", got.RawJSON())
	}
	if got.Usage.PromptTokens != 12 || got.Usage.CompletionTokens != 7 || got.Usage.TotalTokens != 19 {
		t.Fatalf("usage = %+v", got.Usage)
	}
	if strings.Contains(got.RawJSON(), `"error"`) {
		t.Fatalf("error field in a success: %s", got.RawJSON())
	}
	if resp.Header.Get("X-Should-Retry") != "" {
		t.Fatal("x-should-retry set although nothing had side effects")
	}
	req := e.llm.Requests()[0]
	if req.Temperature == nil || *req.Temperature != 0.2 || req.MaxTokens != 50 || !slices.Equal(req.Stop, []string{"END", "STOP"}) {
		t.Fatalf("parameters not honoured: temp %v max %d stop %v", req.Temperature, req.MaxTokens, req.Stop)
	}
	if len(req.Messages) != 3 || req.Messages[1].Content != "Be brief." || req.Messages[2].Content != "Capital of France?" {
		t.Fatalf("prompt = %+v", req.Messages)
	}
}

func weatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Current weather of a city"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
	})
}

// TestSDKClientToolCalls: a tool declared by the client comes back as a
// real tool call (streamed and not), and its result continues the
// conversation.
func TestSDKClientToolCalls(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.sdk(e.api.Token("alice"))
	ctx := context.Background()
	call := llmtest.Reply{Text: "Let me check.", ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
	e.llm.Enqueue(call, call)
	params := openai.ChatCompletionNewParams{
		Model:    "media-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weatherTool()},
	}

	stream := c.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	finished := 0
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator refused %s", stream.Current().RawJSON())
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished++
			if tc.Name != "get_weather" || tc.Arguments != `{"city":"Paris"}` || tc.ID != "call_w" {
				t.Fatalf("finished tool call %+v", tc)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	msg := acc.Choices[0].Message
	if acc.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.Content != "Let me check." || finished != 1 {
		t.Fatalf("streamed = %+v (finished %d)", acc.ChatCompletion, finished)
	}
	tc := msg.ToolCalls[0]
	if tc.ID != "call_w" || tc.Type != "function" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("tool call = %+v", tc)
	}

	got, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].FinishReason != "tool_calls" || len(got.Choices[0].Message.ToolCalls) != 1 ||
		got.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("non-streamed = %s", got.RawJSON())
	}
	if len(e.seerr.Calls()) != 0 {
		t.Fatal("a client tool call reached an agent tool")
	}

	// The client runs the tool and sends the result back.
	e.llm.Enqueue(llmtest.Reply{Text: "It is 18°C and sunny in Paris."})
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("18°C, sunny", "call_w"))
	final, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.Choices[0].Message.Content != "It is 18°C and sunny in Paris." || final.Choices[0].FinishReason != "stop" {
		t.Fatalf("final = %s", final.RawJSON())
	}
	reqs := e.llm.Requests()
	last := reqs[len(reqs)-1].Messages
	n := len(last)
	if n < 3 || last[n-2].Role != "assistant" || len(last[n-2].ToolCalls) != 1 || last[n-2].ToolCalls[0].ID != "call_w" ||
		last[n-1].Role != "tool" || last[n-1].ToolCallID != "call_w" || last[n-1].Content != "18°C, sunny" {
		t.Fatalf("history sent to the LLM = %+v", last)
	}
	names := []string{}
	for _, tl := range reqs[len(reqs)-1].Tools {
		names = append(names, tl.Function.Name)
	}
	if !slices.Contains(names, "get_weather") || !slices.Contains(names, "search_media") {
		t.Fatalf("tools offered = %v", names)
	}
}

// TestSDKErrors: each error status reaches the SDK as an *openai.Error
// with the OpenAI fields.
func TestSDKErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	c := e.sdk(e.api.Token("alice"))
	user := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	tests := []struct {
		name   string
		reply  *llmtest.Reply
		client *openai.Client
		params openai.ChatCompletionNewParams
		status int
		typ    string
		param  string
		code   string
		retry  string
	}{
		{name: "temperature", params: openai.ChatCompletionNewParams{Model: "naked", Messages: user, Temperature: openai.Float(2.5)},
			status: 400, typ: "invalid_request_error", param: "temperature"},
		{name: "no messages", params: openai.ChatCompletionNewParams{Model: "naked", Messages: []openai.ChatCompletionMessageParamUnion{}},
			status: 400, typ: "invalid_request_error", param: "messages"},
		{name: "bad key", client: e.sdk("ack_" + strings.Repeat("A", 43)), params: openai.ChatCompletionNewParams{Model: "naked", Messages: user},
			status: 401, typ: "authentication_error"},
		{name: "upstream 500", reply: &llmtest.Reply{Status: 500}, params: openai.ChatCompletionNewParams{Model: "naked", Messages: user},
			status: 502, typ: "server_error", code: "llm_server"},
		{name: "upstream 429", reply: &llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, params: openai.ChatCompletionNewParams{Model: "naked", Messages: user},
			status: 429, typ: "rate_limit_error", code: "llm_rate_limit"},
		{name: "upstream rejects key", reply: &llmtest.Reply{Status: 401}, params: openai.ChatCompletionNewParams{Model: "naked", Messages: user},
			status: 502, typ: "server_error", code: "llm_auth", retry: "false"},
		{name: "upstream 400", reply: &llmtest.Reply{Status: 400, Error: "context too long"}, params: openai.ChatCompletionNewParams{Model: "naked", Messages: user},
			status: 400, typ: "invalid_request_error", code: "llm_bad_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reply != nil {
				e.llm.Enqueue(*tc.reply)
			}
			cl := c
			if tc.client != nil {
				cl = tc.client
			}
			for _, stream := range []bool{false, true} {
				if stream && tc.reply != nil {
					e.llm.Enqueue(*tc.reply)
				}
				var err error
				var resp *http.Response
				if stream {
					s := cl.Chat.Completions.NewStreaming(ctx, tc.params, option.WithResponseInto(&resp))
					for s.Next() {
						t.Fatalf("chunk on an error: %s", s.Current().RawJSON())
					}
					err = s.Err()
				} else {
					_, err = cl.Chat.Completions.New(ctx, tc.params, option.WithResponseInto(&resp))
				}
				ae := apiError(t, err)
				if ae.StatusCode != tc.status || ae.Type != tc.typ || ae.Message == "" || (tc.param != "" && ae.Param != tc.param) || (tc.code != "" && ae.Code != tc.code) {
					t.Fatalf("stream=%v: got %d %s", stream, ae.StatusCode, ae.RawJSON())
				}
				if strings.Contains(ae.RawJSON(), llmKey) {
					t.Fatal("error carries the provider key")
				}
				if tc.retry != "" && ae.Response.Header.Get("X-Should-Retry") != tc.retry {
					t.Fatalf("x-should-retry = %q", ae.Response.Header.Get("X-Should-Retry"))
				}
				if tc.status == 429 && ae.Response.Header.Get("Retry-After") != "7" {
					t.Fatalf("Retry-After = %q", ae.Response.Header.Get("Retry-After"))
				}
			}
		})
	}

	t.Run("unknown model", func(t *testing.T) {
		_, err := c.Models.Get(ctx, "gpt-3.5-turbo")
		ae := apiError(t, err)
		if ae.StatusCode != 404 || ae.Type != "not_found_error" || ae.Code != "model_not_found" || ae.Param != "model" {
			t.Fatalf("got %d %s", ae.StatusCode, ae.RawJSON())
		}
	})

	t.Run("no LLM configured", func(t *testing.T) {
		e := newEnv(t, envOptions{noLLM: true})
		_, err := e.sdk(e.api.Token("alice")).Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "naked", Messages: user})
		ae := apiError(t, err)
		if ae.StatusCode != 400 || ae.Code != "llm_not_configured" || !strings.Contains(ae.Message, "LLM configuration not found") {
			t.Fatalf("got %d %s", ae.StatusCode, ae.RawJSON())
		}
	})

	t.Run("mid-stream", func(t *testing.T) {
		e.llm.Enqueue(llmtest.Reply{Text: "one two three four", StreamError: "upstream exploded", StreamErrorAfter: 3})
		s := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "naked", Messages: user})
		acc := openai.ChatCompletionAccumulator{}
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		err := s.Err()
		if err == nil || !strings.Contains(err.Error(), "The LLM provider failed") {
			t.Fatalf("stream error = %v", err)
		}
		if got := acc.Choices[0].Message.Content; got == "" || got == "one two three four" || !strings.HasPrefix("one two three four", got) {
			t.Fatalf("content before the error = %q", acc.Choices[0].Message.Content)
		}
	})
}

// TestAPIKeyLifecycleOnV1: a revoked or expired API key gets an
// OpenAI-shaped 401 on /v1 routes; a live one works on /v1 and /v3.
func TestAPIKeyLifecycleOnV1(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	k := e.createKey(t, map[string]any{"name": "webui", "expires_in_days": 30})
	if _, err := e.sdk(k.Key).Models.List(ctx); err != nil {
		t.Fatalf("live key on /v1/models: %v", err)
	}
	e.llm.Enqueue(llmtest.Reply{Text: "hello"})
	if _, err := e.sdk(k.Key).Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "naked",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err != nil {
		t.Fatalf("live key on /v1/chat/completions: %v", err)
	}
	if r := e.api.Do(http.MethodGet, "/v3/access/users/me/api-keys", "Bearer "+k.Key, nil); r.Status != http.StatusOK {
		t.Fatalf("live key on a /v3 route: %d %s", r.Status, r.Body)
	}

	if r := e.api.As("alice", http.MethodDelete, "/v3/access/users/me/api-keys/"+k.ID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	expired := e.api.StoreAPIKey("alice", time.Now().Add(-time.Minute))
	for name, secret := range map[string]string{"revoked": k.Key, "expired": expired} {
		t.Run(name, func(t *testing.T) {
			_, err := e.sdk(secret).Models.List(ctx)
			ae := apiError(t, err)
			if ae.StatusCode != 401 || ae.Type != "authentication_error" || ae.Message != "Could not validate credentials" {
				t.Fatalf("models: %d %s", ae.StatusCode, ae.RawJSON())
			}
			_, err = e.sdk(secret).Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "naked",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
			if ae := apiError(t, err); ae.StatusCode != 401 || ae.Type != "authentication_error" {
				t.Fatalf("completions: %d %s", ae.StatusCode, ae.RawJSON())
			}
			r := e.api.Do(http.MethodGet, "/v3/access/users/me/api-keys", "Bearer "+secret, nil)
			if r.Status != http.StatusUnauthorized || r.Message() != "Could not validate credentials" {
				t.Fatalf("/v3 route: %d %s", r.Status, r.Body)
			}
		})
	}
}

// namedChoice is an SDK tool_choice forcing one function.
func namedChoice(name string) openai.ChatCompletionToolChoiceOptionUnionParam {
	return openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
		Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: name}}}
}

// TestSDKToolChoice: the SDK's tool_choice reaches the upstream LLM in
// OpenAI's format: a forced choice on the agent's first call only, none on
// every call with the tools still declared.
func TestSDKToolChoice(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.sdk(e.api.Token("alice"))
	ctx := context.Background()
	named := `{"type":"function","function":{"name":"get_weather"}}`
	weather := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
	user := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}
	// since returns the upstream requests made after n, checking their
	// tool_choice ("" = absent) and that every tool stays declared.
	since := func(t *testing.T, n int, want ...string) []llmtest.Request {
		t.Helper()
		reqs := e.llm.Requests()[n:]
		if len(reqs) != len(want) {
			t.Fatalf("%d upstream calls, want %d", len(reqs), len(want))
		}
		for i, r := range reqs {
			if string(r.ToolChoice) != want[i] {
				t.Fatalf("upstream call %d: tool_choice %s, want %s", i+1, r.ToolChoice, want[i])
			}
			names := []string{}
			for _, tl := range r.Tools {
				names = append(names, tl.Function.Name)
			}
			if !slices.Contains(names, "get_weather") || !slices.Contains(names, "search_media") {
				t.Fatalf("upstream call %d offered %v", i+1, names)
			}
		}
		return reqs
	}

	t.Run("client tool forced by name, streamed", func(t *testing.T) {
		n := len(e.llm.Requests())
		e.llm.Enqueue(weather)
		stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "media-agent", Messages: user,
			Tools: []openai.ChatCompletionToolUnionParam{weatherTool()}, ToolChoice: namedChoice("get_weather")})
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			if !acc.AddChunk(stream.Current()) {
				t.Fatalf("accumulator refused %s", stream.Current().RawJSON())
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		msg := acc.Choices[0].Message
		if acc.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_w" ||
			msg.ToolCalls[0].Function.Name != "get_weather" || msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
			t.Fatalf("streamed = %+v", acc.ChatCompletion)
		}
		since(t, n, named)
	})

	t.Run("client tool forced by name", func(t *testing.T) {
		n := len(e.llm.Requests())
		e.llm.Enqueue(weather)
		got, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "media-agent", Messages: user,
			Tools: []openai.ChatCompletionToolUnionParam{weatherTool()}, ToolChoice: namedChoice("get_weather")})
		if err != nil {
			t.Fatal(err)
		}
		if ch := got.Choices[0]; ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 ||
			ch.Message.ToolCalls[0].Function.Name != "get_weather" {
			t.Fatalf("completion = %s", got.RawJSON())
		}
		since(t, n, named)
	})

	t.Run("required applies to the first call only", func(t *testing.T) {
		n := len(e.llm.Requests())
		e.llm.Enqueue(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_s", Name: "search_media", Arguments: `{"query":"Dune"}`}}},
			llmtest.Reply{Text: "Dune (2021) is available."},
		)
		got, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "media-agent", Messages: user,
			Tools: []openai.ChatCompletionToolUnionParam{weatherTool()},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{
				OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoRequired))}})
		if err != nil {
			t.Fatal(err)
		}
		if ch := got.Choices[0]; ch.FinishReason != "stop" || ch.Message.Content != "Dune (2021) is available." || len(ch.Message.ToolCalls) != 0 {
			t.Fatalf("completion = %s", got.RawJSON())
		}
		since(t, n, `"required"`, ``)
	})

	t.Run("none keeps the tools beside a tool history", func(t *testing.T) {
		n := len(e.llm.Requests())
		e.llm.Enqueue(llmtest.Reply{Text: "It is sunny."})
		history := append(append([]openai.ChatCompletionMessageParamUnion{}, user...),
			openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
				ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: "call_w", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}}},
			openai.ToolMessage("18°C, sunny", "call_w"))
		got, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "media-agent", Messages: history,
			Tools: []openai.ChatCompletionToolUnionParam{weatherTool()},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{
				OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoNone))}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Choices[0].Message.Content != "It is sunny." {
			t.Fatalf("completion = %s", got.RawJSON())
		}
		r := since(t, n, `"none"`)[0]
		if m := r.Messages; len(m) < 3 || m[len(m)-1].Role != "tool" || m[len(m)-2].ToolCalls[0].ID != "call_w" {
			t.Fatalf("history sent = %+v", m)
		}
	})

	t.Run("a function the run does not offer", func(t *testing.T) {
		n := len(e.llm.Requests())
		_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "naked", Messages: user,
			Tools: []openai.ChatCompletionToolUnionParam{weatherTool()}, ToolChoice: namedChoice("search_media")})
		ae := apiError(t, err)
		if ae.StatusCode != http.StatusBadRequest || ae.Param != "tool_choice" || ae.Type != "invalid_request_error" ||
			!strings.Contains(ae.Message, `"search_media"`) || !strings.Contains(ae.Message, `"naked"`) {
			t.Fatalf("error = %d %s", ae.StatusCode, ae.RawJSON())
		}
		since(t, n)
	})
}
