package llm

//lint:file-ignore SA1019 go-openai's deprecated fields and models are part of what is compared

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

const streamTestKey = "sk-stream-test-0123456789SECRET"

// captured is one request a capture server received.
type captured struct {
	method, path string
	header       http.Header
	body         []byte
}

// captureServer records requests and answers each with answer.
func captureServer(t *testing.T, answer http.HandlerFunc) (*httptest.Server, func() []captured) {
	t.Helper()
	var mu sync.Mutex
	var reqs []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body})
		mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []captured {
		mu.Lock()
		defer mu.Unlock()
		return append([]captured(nil), reqs...)
	}
}

func answerDone(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// testClient builds a *client for base.
func testClient(t *testing.T, base, key, model string) *client {
	t.Helper()
	c, err := NewClient(Config{APIKey: key, BaseURL: base, Model: model, MaxRetries: -1},
		WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return c.(*client)
}

// goOpenAIClient is go-openai's client for base, as NewClient configured it.
func goOpenAIClient(base, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = base
	return openai.NewClientWithConfig(cfg)
}

// TestStreamRequestMatchesGoOpenAI sends each request with the client and
// with go-openai's CreateChatCompletionStream: same method, URL, headers
// and JSON body.
func TestStreamRequestMatchesGoOpenAI(t *testing.T) {
	zero, half := float32(0), float32(0.5)
	tools := toolsFixture()
	tests := []struct {
		name, model, key string
		req              Request
	}{
		{"plain", "gpt-4o-mini", streamTestKey, Request{}},
		{"without key", "local", "", Request{}},
		{"sampling", "m", streamTestKey, Request{Temperature: &zero, MaxTokens: 64, Stop: []string{"\n\n", "<end>"}}},
		{"reasoning model", "gpt-5-mini", streamTestKey, Request{MaxTokens: 64}},
		{"tools and named choice", "m", streamTestKey, Request{Tools: tools, Temperature: &half,
			ToolChoice: &openai.ToolChoice{Function: openai.ToolFunction{Name: "run_command"}}}},
		{"tools, required", "m", streamTestKey, Request{Tools: tools, ToolChoice: "required"}},
		{"history", "m", streamTestKey, Request{Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "Be <brief> & exact.\u2028"},
			{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "what is this?"},
				{Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA", Detail: "low"}}}},
			{Role: "assistant", ReasoningContent: "hm", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
				Function: openai.FunctionCall{Name: "run_command", Arguments: `{"cmd":"ls"}`}}}},
			{Role: "tool", ToolCallID: "c1", Name: "run_command", Content: "a\x00b\xffc"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, requests := captureServer(t, answerDone)
			base := srv.URL + "/v1"
			req := tt.req
			if req.Messages == nil {
				req.Messages = []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}
			}
			c := testClient(t, base, tt.key, tt.model)
			if _, err := c.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			oreq, err := c.request(req, true)
			if err != nil {
				t.Fatal(err)
			}
			stream, err := goOpenAIClient(base, tt.key).CreateChatCompletionStream(context.Background(), oreq)
			if err != nil {
				t.Fatal(err)
			}
			_ = stream.Close()
			reqs := requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			ours, ref := reqs[0], reqs[1]
			if ours.method != ref.method || ours.path != ref.path || ours.path != "/v1/chat/completions" {
				t.Fatalf("%s %s, go-openai %s %s", ours.method, ours.path, ref.method, ref.path)
			}
			// The length differs where go-openai compacts and escapes raw schemas.
			for _, h := range []http.Header{ours.header, ref.header} {
				h.Del("Content-Length")
			}
			if !reflect.DeepEqual(ours.header, ref.header) {
				t.Fatalf("headers\n%v\ngo-openai\n%v", ours.header, ref.header)
			}
			if got := ours.header.Get("Authorization"); (tt.key == "") != (got == "") {
				t.Fatalf("authorization %q with key %q", got, tt.key)
			}
			if g, w := decodeJSON(t, ours.body), decodeJSON(t, ref.body); !reflect.DeepEqual(g, w) {
				t.Fatalf("body\n%s\ngo-openai\n%s", ours.body, ref.body)
			}
		})
	}
}

// TestStreamCheckErrorsMatchGoOpenAI: the checks go-openai makes before
// sending give the same errors, and nothing is sent.
func TestStreamCheckErrorsMatchGoOpenAI(t *testing.T) {
	tests := []struct {
		name string
		r    openai.ChatCompletionRequest
	}{
		{"completion-only model", openai.ChatCompletionRequest{Model: openai.GPT3Davinci}},
		{"max tokens on a reasoning model", openai.ChatCompletionRequest{Model: "o3-mini", MaxTokens: 5}},
		{"temperature on a reasoning model", openai.ChatCompletionRequest{Model: "gpt-5", Temperature: 0.5}},
		{"tools on gpt-6", openai.ChatCompletionRequest{Model: openai.GPT6Sol, Tools: toolsFixture()}},
		{"content and multi content", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "a", MultiContent: []openai.ChatMessagePart{{Text: "b"}}}}}},
		{"temperature NaN", openai.ChatCompletionRequest{Model: "m", Temperature: float32(math.NaN())}},
	}
	srv, requests := captureServer(t, answerDone)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			if r.Messages == nil {
				r.Messages = []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}
			}
			_, want := goOpenAIClient(srv.URL, "").CreateChatCompletionStream(context.Background(), r)
			_, got := streamBody(&r, nil)
			if want == nil || got == nil || got.Error() != want.Error() || reflect.TypeOf(got) != reflect.TypeOf(want) {
				t.Fatalf("error %v (%T), go-openai %v (%T)", got, got, want, want)
			}
			bg := context.Background()
			if g, w := classify(bg, bg, got, ""), classify(bg, bg, want, ""); !reflect.DeepEqual(g, w) {
				t.Fatalf("classified %+v, go-openai's %+v", g, w)
			}
		})
	}
	if n := len(requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// TestStreamErrorResponsesMatchGoOpenAI: a failure status gives the error
// value go-openai gives, classified the same way, without the key.
func TestStreamErrorResponsesMatchGoOpenAI(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
	}{
		{"openai error", 401, "application/json", `{"error":{"message":"Incorrect API key provided: ` + streamTestKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
		{"numeric code", 429, "application/json", `{"error":{"message":"slow down","type":"requests","code":429}}`},
		{"message list", 400, "application/json", `{"error":{"message":["a is wrong","b too"],"type":"invalid_request_error","param":"tools"}}`},
		{"quota", 429, "application/json", `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`},
		{"html", 502, "text/html", "<html><body>Bad Gateway</body></html>"},
		{"empty body", 503, "", ""},
		{"null error", 500, "application/json", `{"error":null}`},
		{"error not an object", 400, "application/json", `{"error":"boom"}`},
		{"other JSON", 404, "application/json", `{"detail":"Not Found"}`},
		{"truncated JSON", 500, "application/json", `{"error":{"message":"x"`},
		{"redirect status", 302, "text/plain", "moved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := captureServer(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			base := srv.URL + "/v1"
			c := testClient(t, base, streamTestKey, "m")
			oreq, err := c.request(Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}, true)
			if err != nil {
				t.Fatal(err)
			}
			body, err := streamBody(&oreq, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, got := c.openStream(context.Background(), body)
			if resp != nil {
				_ = resp.Body.Close()
			}
			_, want := goOpenAIClient(base, streamTestKey).CreateChatCompletionStream(context.Background(), oreq)
			if tt.status < 400 {
				// A redirect go-openai would read as a stream is not
				// followed, nor read: an error saying so.
				var le *Error
				if !errors.As(got, &le) || le.Status != tt.status || !strings.Contains(le.UserMessage(), "redirect") {
					t.Fatalf("error %v, want the redirect refused", got)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("error %#v\ngo-openai %#v", got, want)
			}
			bg := context.Background()
			le := classify(bg, bg, got, streamTestKey)
			if !reflect.DeepEqual(le, classify(bg, bg, want, streamTestKey)) {
				t.Fatalf("classified differently: %+v", le)
			}
			for _, text := range []string{le.Error(), le.Detail, le.UserMessage()} {
				if strings.Contains(text, streamTestKey) || strings.Contains(text, "SECRET") {
					t.Fatalf("%q leaks the key", text)
				}
			}
		})
	}
}

// TestStreamGarbageEnds: a 200 answer that never sends a data line ends
// with a malformed-response error instead of reading forever.
func TestStreamGarbageEnds(t *testing.T) {
	srv, _ := captureServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, "<html>not an event stream</html>\n"); err != nil {
				return
			}
			fl.Flush()
		}
	})
	c := testClient(t, srv.URL+"/v1", streamTestKey, "m")
	_, err := c.Stream(context.Background(), Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}, nil)
	var le *Error
	if !errors.As(err, &le) || le.Kind != KindBadResponse || le.Attempts != 1 {
		t.Fatalf("error %v (%+v)", err, le)
	}
}

// TestStreamServerVariants: event streams as various servers write them.
func TestStreamServerVariants(t *testing.T) {
	args := `{"text":"` + strings.Repeat("long argument ", 2000) + `"}`
	argsJSON, _ := json.Marshal(args)
	tests := []struct {
		name, body string
		content    string
		arguments  string
	}{
		{"no space, CRLF, comments and events",
			": keep-alive\r\nevent: message\r\nid: 1\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\n\r\n" +
				"retry: 1000\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata:[DONE]\r\n\r\n",
			"ab", ""},
		{"a tool call line longer than the read buffer",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":" +
				string(argsJSON) + "}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
			"", args},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := captureServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.body)
			})
			c := testClient(t, srv.URL+"/v1", streamTestKey, "m")
			res, err := c.Stream(context.Background(), Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Content != tt.content {
				t.Fatalf("content %q", res.Content)
			}
			if tt.arguments != "" && (len(res.ToolCalls) != 1 || res.ToolCalls[0].Function.Arguments != tt.arguments) {
				t.Fatalf("tool calls %+v", res.ToolCalls)
			}
		})
	}
}

// TestCompletionOnlyModels: the models refused before sending are
// go-openai's, and only those.
func TestCompletionOnlyModels(t *testing.T) {
	refused := []string{openai.CodexCodeDavinci002, openai.CodexCodeCushman001, openai.CodexCodeDavinci001,
		openai.GPT3TextDavinci003, openai.GPT3TextDavinci002, openai.GPT3TextCurie001,
		openai.GPT3TextBabbage001, openai.GPT3TextAda001, openai.GPT3TextDavinci001,
		openai.GPT3DavinciInstructBeta, openai.GPT3Davinci, openai.GPT3CurieInstructBeta,
		openai.GPT3Curie, openai.GPT3Ada, openai.GPT3Babbage}
	accepted := []string{"gpt-4o-mini", openai.GPT3Dot5Turbo, openai.GPT4o, "llama3.1", "", "davinci-002", "Davinci"}
	srv, _ := captureServer(t, answerDone)
	for _, model := range append(refused, accepted...) {
		r := openai.ChatCompletionRequest{Model: model, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}
		stream, err := goOpenAIClient(srv.URL, "").CreateChatCompletionStream(context.Background(), r)
		if stream != nil {
			_ = stream.Close()
		}
		goRefuses := errors.Is(err, openai.ErrChatCompletionInvalidModel)
		if completionOnlyModel(model) != goRefuses {
			t.Errorf("model %q: refused %v, go-openai %v", model, completionOnlyModel(model), goRefuses)
		}
	}
}
