package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"

	openai "github.com/sashabaranov/go-openai"
)

const testKey = "sk-test-0123456789abcdefSECRET"

// waitLimit bounds waits on events that must happen (not a speed assertion).
const waitLimit = 20 * time.Second

func newClient(t *testing.T, baseURL string, mod func(*llm.Config)) llm.Client {
	t.Helper()
	cfg := llm.Config{APIKey: testKey, BaseURL: baseURL, Model: "test-model", RetryBackoff: time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.NewClient(cfg, llm.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func userMsg(text string) llm.Request {
	return llm.Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}}
}

// collect streams req and returns the deltas received.
func collect(t *testing.T, ctx context.Context, c llm.Client, req llm.Request) ([]llm.Delta, *llm.Result, error) {
	t.Helper()
	var deltas []llm.Delta
	res, err := c.Stream(ctx, req, func(d llm.Delta) error {
		if d.ToolCall != nil {
			tc := *d.ToolCall
			d.ToolCall = &tc
		}
		d.More = false // depends on how the reads fell; see TestMoreJoinsIncrementsReadTogether
		deltas = append(deltas, d)
		return nil
	})
	if res == nil {
		t.Fatal("Stream returned a nil Result")
	}
	return deltas, res, err
}

func asLLMError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return le
}

func TestStreamContentInOrder(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "Hello brave new world", Usage: &llmtest.Usage{PromptTokens: 7, CompletionTokens: 4}, Model: "served-model"})
	c := newClient(t, srv.BaseURL(), nil)
	deltas, res, err := collect(t, context.Background(), c, userMsg("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range deltas {
		if d.ToolCall != nil || d.Reasoning != "" {
			t.Fatalf("unexpected delta %+v", d)
		}
		got = append(got, d.Content)
	}
	if want := []string{"Hello", " brave", " new", " world"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("deltas %q, want %q", got, want)
	}
	want := &llm.Result{Content: "Hello brave new world", FinishReason: "stop", Model: "served-model",
		Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 4, TotalTokens: 11}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if !r.Stream || !r.IncludeUsage() || r.Model != "test-model" || r.Header.Get("Authorization") != "Bearer "+testKey {
		t.Fatalf("request %+v", r)
	}
	if len(r.Messages) != 1 || r.Messages[0].Content != "hi" {
		t.Fatalf("messages %+v", r.Messages)
	}
}

// TestMoreJoinsIncrementsReadTogether: an increment that arrived with
// the next one has More, except the first (the first token waits for
// nothing); the last one of a read goes without More before the client
// waits for the server. The server sends each part only once the test has
// the last increment of the part before: holding one back would never end.
func TestMoreJoinsIncrementsReadTogether(t *testing.T) {
	chunk := func(text string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n"
	}
	// gates opens when the test has the increment of its name.
	gates := map[string]chan struct{}{"b": make(chan struct{}), "d": make(chan struct{})}
	parts := []struct {
		after <-chan struct{} // nil: at once
		data  string
	}{
		{nil, chunk("a") + chunk("b")},
		{gates["b"], chunk("c") + chunk("d")},
		{gates["d"], chunk("e") + "data: [DONE]\n\n"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, p := range parts {
			if p.after != nil {
				select {
				case <-p.after:
				case <-r.Context().Done():
					return
				}
			}
			_, _ = io.WriteString(w, p.data)
			_ = rc.Flush()
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var got []llm.Delta
	_, err := c.Stream(ctx, userMsg("hi"), func(d llm.Delta) error {
		got = append(got, d)
		if g, ok := gates[d.Content]; ok {
			close(g)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Delta{{Content: "a"}, {Content: "b"}, {Content: "c", More: true}, {Content: "d"}, {Content: "e"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deltas %+v, want %+v", got, want)
	}
}

func TestStreamReasoning(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Reasoning: "let me think", Text: "42"})
	c := newClient(t, srv.BaseURL(), nil)
	deltas, res, err := collect(t, context.Background(), c, userMsg("q"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Delta{{Reasoning: "let"}, {Reasoning: " me"}, {Reasoning: " think"}, {Content: "42"}}
	if !reflect.DeepEqual(deltas, want) {
		t.Fatalf("deltas %+v", deltas)
	}
	if res.Reasoning != "let me think" || res.Content != "42" {
		t.Fatalf("result %+v", res)
	}
}

func TestStreamSingleToolCall(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "search_media",
		Fragments: []string{`{"qu`, `ery":`, `"Dune"}`}}}})
	c := newClient(t, srv.BaseURL(), nil)
	deltas, res, err := collect(t, context.Background(), c, userMsg("find dune"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Delta{
		{ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "search_media", First: true}},
		{ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "search_media", Arguments: `{"qu`, Fragment: `{"qu`}},
		{ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "search_media", Arguments: `{"query":`, Fragment: `ery":`}},
		{ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "search_media", Arguments: `{"query":"Dune"}`, Fragment: `"Dune"}`}},
	}
	if !reflect.DeepEqual(deltas, want) {
		for _, d := range deltas {
			t.Logf("%+v", *d.ToolCall)
		}
		t.Fatal("tool call deltas differ")
	}
	wantCalls := []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "search_media", Arguments: `{"query":"Dune"}`}}}
	if !reflect.DeepEqual(res.ToolCalls, wantCalls) || res.FinishReason != "tool_calls" || res.Content != "" {
		t.Fatalf("result %+v", res)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	calls := []llmtest.ToolCall{
		{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		{ID: "call_b", Name: "get_weather", Arguments: `{"city":"Tokyo","unit":"celsius"}`},
		{ID: "call_c", Name: "get_time", Arguments: `{"tz":"Asia/Tokyo"}`},
	}
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"sequential", llmtest.Reply{ToolCalls: calls}},
		{"interleaved", llmtest.Reply{ToolCalls: calls, Interleave: true}},
		{"without index", llmtest.Reply{ToolCalls: calls, OmitToolIndex: true}},
		{"after content", llmtest.Reply{Text: "Let me check.", ToolCalls: calls, Interleave: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply)
			c := newClient(t, srv.BaseURL(), nil)
			deltas, res, err := collect(t, context.Background(), c, userMsg("weather"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolCalls) != len(calls) {
				t.Fatalf("%d tool calls: %+v", len(res.ToolCalls), res.ToolCalls)
			}
			for i, want := range calls {
				got := res.ToolCalls[i]
				if got.ID != want.ID || got.Function.Name != want.Name || got.Function.Arguments != want.Arguments ||
					got.Type != openai.ToolTypeFunction || got.Index != nil {
					t.Errorf("call %d = %+v, want %+v", i, got, want)
				}
				if !json.Valid([]byte(got.Function.Arguments)) {
					t.Errorf("call %d arguments not JSON: %s", i, got.Function.Arguments)
				}
			}
			// Every delta belongs to its own call; each call starts with one
			// First delta with empty arguments; arguments grow by Fragment.
			firsts := map[int]int{}
			args := map[int]string{}
			for _, d := range deltas {
				tc := d.ToolCall
				if tc == nil {
					continue
				}
				want := calls[tc.Index]
				if tc.ID != want.ID || tc.Name != want.Name {
					t.Fatalf("delta %+v mixes calls", *tc)
				}
				if tc.First {
					firsts[tc.Index]++
					if tc.Arguments != "" || tc.Fragment != "" || args[tc.Index] != "" {
						t.Fatalf("first delta %+v", *tc)
					}
					continue
				}
				if firsts[tc.Index] != 1 {
					t.Fatalf("fragment before the first delta: %+v", *tc)
				}
				if tc.Arguments != args[tc.Index]+tc.Fragment || tc.Fragment == "" {
					t.Fatalf("delta %+v does not extend %q", *tc, args[tc.Index])
				}
				args[tc.Index] = tc.Arguments
			}
			for i := range calls {
				if firsts[i] != 1 || args[i] != calls[i].Arguments {
					t.Errorf("call %d: %d first deltas, arguments %q", i, firsts[i], args[i])
				}
			}
			if res.Content != tt.reply.Text {
				t.Errorf("content %q", res.Content)
			}
		})
	}
}

func TestStreamRetriesBeforeFirstToken(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After-Ms": {"5"}}},
		llmtest.Reply{Status: http.StatusInternalServerError},
		llmtest.Reply{Text: "hang", HangUp: true, HangUpAfter: 1}, // after the role chunk: nothing delivered yet
		llmtest.Reply{Text: "finally ok"},
	)
	c := newClient(t, srv.BaseURL(), func(cfg *llm.Config) { cfg.MaxRetries = 3 })
	_, res, err := collect(t, context.Background(), c, userMsg("x"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "finally ok" {
		t.Fatalf("content %q", res.Content)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
}

func TestStreamRetriesExhausted(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		wantReqs   int
	}{
		{"default two retries", 0, 3},
		{"one retry", 1, 2},
		{"no retries", -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.SetDefault(llmtest.Reply{Status: http.StatusBadGateway})
			c := newClient(t, srv.BaseURL(), func(cfg *llm.Config) { cfg.MaxRetries = tt.maxRetries })
			_, _, err := collect(t, context.Background(), c, userMsg("x"))
			le := asLLMError(t, err)
			if le.Kind != llm.KindServer || le.Status != http.StatusBadGateway || le.Attempts != tt.wantReqs {
				t.Fatalf("error %+v", le)
			}
			if got := le.UserMessage(); got != "The LLM provider failed (502)." {
				t.Fatalf("user message %q", got)
			}
			if n := len(srv.Requests()); n != tt.wantReqs {
				t.Fatalf("%d requests, want %d", n, tt.wantReqs)
			}
		})
	}
}

func TestStreamNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		reply    llmtest.Reply
		kind     llm.Kind
		status   int
		message  string
		contains string
	}{
		{"bad request", llmtest.Reply{Status: 400, Error: "This model's maximum context length is 8192 tokens."},
			llm.KindBadRequest, 400, "", "maximum context length"},
		{"model not found", llmtest.Reply{Status: 404}, llm.KindBadRequest, 404, "", "does not exist"},
		{"forbidden", llmtest.Reply{Status: 403}, llm.KindAuth, 403, "The LLM provider rejected the API key (403).", ""},
		{"quota", llmtest.Reply{Status: 429, ErrorCode: "insufficient_quota", ErrorType: "insufficient_quota",
			Error: "You exceeded your current quota."}, llm.KindQuota, 429, "The LLM provider account has exceeded its quota (429).", ""},
		{"retry-after too long", llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"600"}}},
			llm.KindRateLimit, 429, "The LLM provider is rate limiting requests (429). Try again shortly.", ""},
		{"malformed chunk", llmtest.Reply{Text: "a b c", Malformed: true, MalformedAfter: 1},
			llm.KindBadResponse, 0, "The LLM provider sent a malformed response.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply, llmtest.Reply{Text: "must not be used"})
			c := newClient(t, srv.BaseURL(), nil)
			_, _, err := collect(t, context.Background(), c, userMsg("x"))
			le := asLLMError(t, err)
			if le.Kind != tt.kind || le.Status != tt.status {
				t.Fatalf("error %+v (%v)", le, le)
			}
			msg := llm.UserMessage(err)
			if tt.message != "" && msg != tt.message {
				t.Fatalf("user message %q, want %q", msg, tt.message)
			}
			if !strings.Contains(msg, tt.contains) {
				t.Fatalf("user message %q lacks %q", msg, tt.contains)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
		})
	}
}

func TestNoRetryAfterFirstToken(t *testing.T) {
	srv := llmtest.NewServer(t)
	// role chunk, "Hello", " world", then the connection drops.
	srv.Enqueue(llmtest.Reply{Text: "Hello world and more", HangUp: true, HangUpAfter: 3}, llmtest.Reply{Text: "retry"})
	c := newClient(t, srv.BaseURL(), nil)
	deltas, res, err := collect(t, context.Background(), c, userMsg("x"))
	le := asLLMError(t, err)
	if le.Kind != llm.KindConnection {
		t.Fatalf("error %+v", le)
	}
	if res.Content != "Hello world" || len(deltas) != 2 {
		t.Fatalf("partial result %+v, %d deltas", res, len(deltas))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry after a token)", n)
	}
	if srv.Pending() != 1 {
		t.Fatalf("the second reply was consumed")
	}
	if msg := llm.UserMessage(err); msg == "" || strings.Contains(msg, testKey) {
		t.Fatalf("user message %q", msg)
	}
}

func TestStreamErrorEventMidStream(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "partial answer here", StreamError: "The server had an error", StreamErrorAfter: 3})
	c := newClient(t, srv.BaseURL(), nil)
	_, res, err := collect(t, context.Background(), c, userMsg("x"))
	le := asLLMError(t, err)
	if le.Kind != llm.KindServer || res.Content != "partial answer" {
		t.Fatalf("error %+v, result %+v", le, res)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func TestStreamWithoutDoneIsAccepted(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "done anyway", NoDone: true})
	c := newClient(t, srv.BaseURL(), nil)
	_, res, err := collect(t, context.Background(), c, userMsg("x"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "done anyway" || res.FinishReason != "stop" || res.Usage.TotalTokens == 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestUnauthorizedHidesKey(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: 401,
		Error: "Incorrect API key provided: " + testKey + ". Authorization: Bearer " + testKey + " was refused; api_key=hunter2"})
	c := newClient(t, srv.BaseURL(), nil)
	_, _, err := collect(t, context.Background(), c, userMsg("x"))
	le := asLLMError(t, err)
	if le.Kind != llm.KindAuth || le.Status != 401 {
		t.Fatalf("error %+v", le)
	}
	if got := llm.UserMessage(err); got != "The LLM provider rejected the API key (401)." {
		t.Fatalf("user message %q", got)
	}
	for _, text := range []string{err.Error(), le.Detail, le.UserMessage()} {
		for _, secret := range []string{testKey, "sk-test", "SECRET", "hunter2"} {
			if strings.Contains(text, secret) {
				t.Fatalf("%q leaks %q", text, secret)
			}
		}
	}
	if !strings.Contains(err.Error(), "Incorrect API key provided") {
		t.Fatalf("error lost the provider's message: %q", err.Error())
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, "http://"+addr+"/v1", func(cfg *llm.Config) { cfg.MaxRetries = 1 })
	_, _, err = collect(t, context.Background(), c, userMsg("x"))
	le := asLLMError(t, err)
	if le.Kind != llm.KindConnection || le.Attempts != 2 {
		t.Fatalf("error %+v", le)
	}
	if got := llm.UserMessage(err); got != "Could not reach the LLM provider." {
		t.Fatalf("user message %q", got)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatal("error leaks the key")
	}
}

func TestCallTimeout(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply{Hang: true})
	c := newClient(t, srv.BaseURL(), func(cfg *llm.Config) { cfg.CallTimeout = 150 * time.Millisecond })
	_, _, err := collect(t, context.Background(), c, userMsg("x"))
	le := asLLMError(t, err)
	if le.Kind != llm.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %+v", le)
	}
	if got := llm.UserMessage(err); got != "The LLM provider did not answer in time: no first token within 150ms (LLM_TIMEOUT_SECONDS)." {
		t.Fatalf("user message %q", got)
	}
	waitDisconnect(t, srv)
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests (a timeout is not retried)", n)
	}
}

func waitDisconnect(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	select {
	case <-srv.Disconnects():
	case <-time.After(waitLimit):
		t.Fatal("the upstream never saw the client disconnect")
	}
}

func TestCancelReachesUpstream(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"before the headers", llmtest.Reply{Hang: true}},
		{"mid-stream", llmtest.Reply{Text: "one two three", Hang: true, HangAfter: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			arrived := make(chan struct{}, 1)
			srv.SetHandler(func(llmtest.Request) llmtest.Reply {
				arrived <- struct{}{}
				return tt.reply
			})
			c := newClient(t, srv.BaseURL(), nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-arrived:
					if tt.reply.HangAfter > 0 {
						time.Sleep(10 * time.Millisecond) // let the first chunks flow
					}
					cancel()
				case <-time.After(waitLimit):
				}
			}()
			_, _, err := collect(t, ctx, c, userMsg("x"))
			le := asLLMError(t, err)
			if le.Kind != llm.KindCancelled || !errors.Is(err, context.Canceled) {
				t.Fatalf("error %+v", le)
			}
			waitDisconnect(t, srv)
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests (a cancelled call is not retried)", n)
			}
		})
	}
}

func TestOnDeltaErrorStopsCall(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "one two three", Hang: true, HangAfter: 3})
	c := newClient(t, srv.BaseURL(), nil)
	stop := errors.New("client left")
	var got []string
	res, err := c.Stream(context.Background(), userMsg("x"), func(d llm.Delta) error {
		got = append(got, d.Content)
		if len(got) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("error %v, want the callback's", err)
	}
	if res.Content != "one two" {
		t.Fatalf("partial %q", res.Content)
	}
	waitDisconnect(t, srv)
}

// sentChoice checks the raw tool_choice of a request ("" = absent) and its
// number of tools.
func sentChoice(want string, tools int) func(t *testing.T, r llmtest.Request) {
	return func(t *testing.T, r llmtest.Request) {
		t.Helper()
		if string(r.ToolChoice) != want || len(r.Tools) != tools {
			t.Fatalf("tool_choice %s with %d tools, want %s with %d (body %s)", r.ToolChoice, len(r.Tools), want, tools, r.Body)
		}
	}
}

func TestRequestParameters(t *testing.T) {
	zero := float32(0)
	half := float32(0.5)
	tools := []openai.Tool{{Type: openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	tests := []struct {
		name        string
		model       string
		req         llm.Request
		check       func(t *testing.T, r llmtest.Request)
		wantErrKind llm.Kind
	}{
		{"temperature zero is sent", "m", llm.Request{Temperature: &zero, MaxTokens: 16, Stop: []string{"\n"}},
			func(t *testing.T, r llmtest.Request) {
				if r.Temperature == nil || *r.Temperature > 1e-6 || r.MaxTokens != 16 || !reflect.DeepEqual(r.Stop, []string{"\n"}) {
					t.Fatalf("request %+v", r)
				}
			}, ""},
		{"temperature and model override", "m", llm.Request{Model: "other", Temperature: &half},
			func(t *testing.T, r llmtest.Request) {
				if r.Model != "other" || r.Temperature == nil || *r.Temperature != 0.5 || r.MaxTokens != 0 {
					t.Fatalf("request %+v", r)
				}
			}, ""},
		{"reasoning model gets max_completion_tokens", "gpt-5-mini", llm.Request{MaxTokens: 40},
			func(t *testing.T, r llmtest.Request) {
				if r.MaxTokens != 0 || r.MaxCompletionTokens != 40 || r.Temperature != nil {
					t.Fatalf("request %+v", r)
				}
			}, ""},
		{"tools are sent", "m", llm.Request{Tools: []openai.Tool{{Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}}},
			func(t *testing.T, r llmtest.Request) {
				if len(r.Tools) != 1 || r.Tools[0].Function.Name != "f" {
					t.Fatalf("request %+v", r)
				}
			}, ""},
		{"tool choice none keeps the tools", "m", llm.Request{Tools: tools, ToolChoice: "none"}, sentChoice(`"none"`, 1), ""},
		{"tool choice auto", "m", llm.Request{Tools: tools, ToolChoice: "auto"}, sentChoice(`"auto"`, 1), ""},
		{"tool choice required", "m", llm.Request{Tools: tools, ToolChoice: "required"}, sentChoice(`"required"`, 1), ""},
		{"tool choice named", "m", llm.Request{Tools: tools, ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction,
			Function: openai.ToolFunction{Name: "f"}}}, sentChoice(`{"type":"function","function":{"name":"f"}}`, 1), ""},
		{"tool choice named by pointer, type defaulted", "m", llm.Request{Tools: tools, ToolChoice: &openai.ToolChoice{
			Function: openai.ToolFunction{Name: "f"}}}, sentChoice(`{"type":"function","function":{"name":"f"}}`, 1), ""},
		{"empty tool choice is not sent", "m", llm.Request{Tools: tools, ToolChoice: ""}, sentChoice(``, 1), ""},
		{"nil pointer tool choice is not sent", "m", llm.Request{Tools: tools, ToolChoice: (*openai.ToolChoice)(nil)}, sentChoice(``, 1), ""},
		{"tool choice none without tools is not sent", "m", llm.Request{ToolChoice: "none"}, sentChoice(``, 0), ""},
		{"tool choice required without tools", "m", llm.Request{ToolChoice: "required"}, nil, llm.KindBadRequest},
		{"tool choice unknown string", "m", llm.Request{Tools: tools, ToolChoice: "any"}, nil, llm.KindBadRequest},
		{"tool choice names an unknown function", "m", llm.Request{Tools: tools, ToolChoice: openai.ToolChoice{
			Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "g"}}}, nil, llm.KindBadRequest},
		{"tool choice names no function", "m", llm.Request{Tools: tools, ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction}}, nil, llm.KindBadRequest},
		{"tool choice of another type", "m", llm.Request{Tools: tools, ToolChoice: openai.ToolChoice{Type: "custom",
			Function: openai.ToolFunction{Name: "f"}}}, nil, llm.KindBadRequest},
		{"tool choice of an unsupported Go type", "m", llm.Request{Tools: tools, ToolChoice: 1}, nil, llm.KindBadRequest},
		{"temperature out of range", "m", llm.Request{Temperature: new(float32(3))}, nil, llm.KindBadRequest},
		{"negative max tokens", "m", llm.Request{MaxTokens: -1}, nil, llm.KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			c := newClient(t, srv.BaseURL(), func(cfg *llm.Config) { cfg.Model = tt.model })
			req := tt.req
			req.Messages = userMsg("x").Messages
			_, _, err := collect(t, context.Background(), c, req)
			if tt.wantErrKind != "" {
				if le := asLLMError(t, err); le.Kind != tt.wantErrKind {
					t.Fatalf("error %+v", le)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Fatalf("%d requests sent for an invalid request", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, srv.Requests()[0])
		})
	}
}

func TestNoMessagesIsBadRequest(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := newClient(t, srv.BaseURL(), nil)
	_, err := c.Complete(context.Background(), llm.Request{})
	if le := asLLMError(t, err); le.Kind != llm.KindBadRequest {
		t.Fatalf("error %+v", le)
	}
}

func TestComplete(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Reply{Status: http.StatusServiceUnavailable},
		llmtest.Reply{Text: "Dune night", Usage: &llmtest.Usage{PromptTokens: 30, CompletionTokens: 2}},
	)
	c := newClient(t, srv.BaseURL(), nil)
	req := userMsg("Title for: let's watch Dune tonight")
	req.MaxTokens = 16
	res, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Result{Content: "Dune night", FinishReason: "stop", Model: "test-model",
		Usage: llm.Usage{PromptTokens: 30, CompletionTokens: 2, TotalTokens: 32}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one retry)", len(reqs))
	}
	if r := reqs[1]; r.Stream || r.StreamOptions != nil || r.MaxTokens != 16 {
		t.Fatalf("request %+v", r)
	}
}

func TestCompleteToolCallsAndErrors(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_9", Name: "f", Arguments: `{"a":1}`}}},
		llmtest.Reply{Malformed: true},
		llmtest.Reply{Status: 401, Error: "bad key " + testKey},
	)
	c := newClient(t, srv.BaseURL(), nil)
	res, err := c.Complete(context.Background(), userMsg("x"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].ID != "call_9" || res.ToolCalls[0].Function.Arguments != `{"a":1}` ||
		res.FinishReason != "tool_calls" {
		t.Fatalf("result %+v", res)
	}
	_, err = c.Complete(context.Background(), userMsg("x"))
	if le := asLLMError(t, err); le.Kind != llm.KindBadResponse {
		t.Fatalf("error %+v", le)
	}
	_, err = c.Complete(context.Background(), userMsg("x"))
	if le := asLLMError(t, err); le.Kind != llm.KindAuth || strings.Contains(err.Error(), testKey) {
		t.Fatalf("error %+v: %v", le, err)
	}
}

func TestCompleteTimeout(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply{Hang: true})
	c := newClient(t, srv.BaseURL(), func(cfg *llm.Config) { cfg.CallTimeout = 100 * time.Millisecond })
	_, err := c.Complete(context.Background(), userMsg("x"))
	if le := asLLMError(t, err); le.Kind != llm.KindTimeout {
		t.Fatalf("error %+v", le)
	}
	waitDisconnect(t, srv)
}

func TestNewClientValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		ok   bool
	}{
		{"defaults", llm.Config{Model: "m"}, true},
		{"local server without key", llm.Config{Model: "m", BaseURL: "http://127.0.0.1:11434/v1"}, true},
		{"no model", llm.Config{BaseURL: "http://x/v1"}, false},
		{"not http", llm.Config{Model: "m", BaseURL: "ftp://x/v1"}, false},
		{"no host", llm.Config{Model: "m", BaseURL: "http:///v1"}, false},
		{"garbage", llm.Config{Model: "m", BaseURL: "::"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.NewClient(tt.cfg)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && c.Model() != tt.cfg.Model {
				t.Fatalf("model %q", c.Model())
			}
		})
	}
}

func TestWithHTTPClient(t *testing.T) {
	srv := llmtest.NewServer(t)
	var used bool
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, err := llm.NewClient(llm.Config{Model: "m", BaseURL: srv.BaseURL()}, llm.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), userMsg("x")); err != nil || !used {
		t.Fatalf("err %v, used %v", err, used)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Fatalf("authorization %q sent without a key", h)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestStaticResolver(t *testing.T) {
	if _, err := llm.NewStaticResolver(nil).Resolve(context.Background(), "u1"); !errors.Is(err, llm.ErrNotConfigured) {
		t.Fatalf("nil client: %v", err)
	}
	c := newClient(t, "http://127.0.0.1:1/v1", nil)
	got, err := llm.NewStaticResolver(c).Resolve(context.Background(), "u1")
	if err != nil || got.Client != c || got.Name != "" || got.ContextLimit != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestUserMessageOfAnyError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{llm.ErrNotConfigured, "LLM configuration not found. Please configure your LLM settings first."},
		{context.Canceled, "The LLM call was cancelled."},
		{context.DeadlineExceeded, "The LLM provider did not answer in time."},
		{errors.New("dial tcp: Bearer " + testKey), "The LLM call failed."},
		{&llm.Error{Kind: llm.KindRateLimit, Status: 429}, "The LLM provider is rate limiting requests (429). Try again shortly."},
		{&llm.Error{Kind: llm.KindServer, Status: 500}, "The LLM provider failed (500)."},
		{&llm.Error{Kind: llm.KindTimeout}, "The LLM provider did not answer in time."},
		{&llm.Error{Kind: llm.KindBadResponse}, "The LLM provider sent a malformed response."},
		{&llm.Error{Kind: llm.KindConnection}, "Could not reach the LLM provider."},
	}
	for _, tt := range tests {
		if got := llm.UserMessage(tt.err); got != tt.want {
			t.Errorf("UserMessage(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestConcurrentStreams checks that one client serves parallel calls
// without mixing their accumulations.
func TestConcurrentStreams(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetHandler(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "echo " + r.Messages[0].Content}
	})
	c := newClient(t, srv.BaseURL(), nil)
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			want := "msg" + strings.Repeat("x", i)
			res, err := c.Stream(context.Background(), userMsg(want), func(llm.Delta) error { return nil })
			if err == nil && res.Content != "echo "+want {
				err = errors.New("got " + res.Content)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
