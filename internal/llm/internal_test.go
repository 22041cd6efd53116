package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

func TestSanitize(t *testing.T) {
	const key = "my-custom-key-1234567890"
	tests := []struct {
		in      string
		leaks   []string
		keeps   string
		maxSize int
	}{
		{"Incorrect API key provided: sk-proj-abcDEF123456789. You can find your key", []string{"sk-proj", "abcDEF"}, "Incorrect API key provided", 0},
		{"masked sk-abc***********wxyz here", []string{"sk-abc", "wxyz"}, "masked", 0},
		{"header Authorization: Bearer abc.def.ghi refused", []string{"abc.def.ghi", "Bearer abc"}, "refused", 0},
		{`{"api_key": "zzz-secret-value"}`, []string{"zzz-secret-value"}, "api_key", 0},
		{"custom key " + key + " rejected", []string{key}, "rejected", 0},
		{"groq gsk_abcdefghijklmnop and google AIzaSyA1234567890abcdefghijkl", []string{"gsk_abc", "AIzaSy"}, "groq", 0},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_part", []string{"eyJhbGci", "sig_part"}, "jwt", 0},
		{strings.Repeat("é", 400), nil, "é", maxDetail + len("…")},
		{"multi\n  line\ttext", nil, "multi line text", 0},
	}
	for _, tt := range tests {
		got := sanitize(tt.in, key)
		for _, l := range tt.leaks {
			if strings.Contains(got, l) {
				t.Errorf("sanitize(%q) = %q leaks %q", tt.in, got, l)
			}
		}
		if !strings.Contains(got, tt.keeps) {
			t.Errorf("sanitize(%q) = %q lost %q", tt.in, got, tt.keeps)
		}
		if tt.maxSize > 0 && len(got) > tt.maxSize {
			t.Errorf("sanitize kept %d bytes", len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("sanitize broke UTF-8: %q", got)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-1"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.h, now); got != tt.want {
			t.Errorf("parseRetryAfter(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

// chunkedReader returns its data n bytes at a time, with io.EOF on the
// last read (as HTTP bodies may).
type chunkedReader struct {
	data []byte
	n    int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	k := min(r.n, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	if len(r.data) == 0 {
		return k, io.EOF
	}
	return k, nil
}

func TestTrackedBodyEndedWithDone(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{"data: {}\n\ndata: [DONE]\n\n", true},
		{"data: {}\n\ndata:[DONE]", true},
		{"data: {}\n\ndata: [DONE]\n\n\n\n", true},
		{"data: {}\n\n", false},
		{`data: {"content":"[DONE]"}` + "\n\n", false},
		{"", false},
	}
	for _, tt := range tests {
		for _, step := range []int{1, 3, 7, 64} {
			b := &trackedBody{rc: io.NopCloser(&chunkedReader{data: []byte(tt.body), n: step})}
			if _, err := io.Copy(io.Discard, b); err != nil {
				t.Fatal(err)
			}
			if got := b.endedWithDone(); got != tt.want {
				t.Errorf("body %q step %d: endedWithDone = %v, want %v", tt.body, step, got, tt.want)
			}
		}
	}
	b := &trackedBody{rc: io.NopCloser(strings.NewReader("data: x\n"))}
	if !b.endedWithDone() {
		t.Error("a body not read to its end ended with [DONE] (the reader stopped there)")
	}
}

func idx(i int) *int { return &i }

func TestAccumulatorEdgeCases(t *testing.T) {
	tc := func(index *int, id, name, args string) openai.ToolCall {
		return openai.ToolCall{Index: index, ID: id, Function: openai.FunctionCall{Name: name, Arguments: args}}
	}
	tests := []struct {
		name   string
		chunks [][]openai.ToolCall
		want   []openai.FunctionCall
		ids    []string // "" = generated
	}{
		{"index reused for a new id", [][]openai.ToolCall{
			{tc(idx(0), "a", "f", "")}, {tc(idx(0), "", "", `{"x":1}`)},
			{tc(idx(0), "b", "g", "")}, {tc(idx(0), "", "", `{"y":2}`)},
		}, []openai.FunctionCall{{Name: "f", Arguments: `{"x":1}`}, {Name: "g", Arguments: `{"y":2}`}}, []string{"a", "b"}},
		{"whole calls without index in one chunk", [][]openai.ToolCall{
			{tc(nil, "a", "f", `{}`), tc(nil, "b", "g", `{"k":"v"}`)},
		}, []openai.FunctionCall{{Name: "f", Arguments: `{}`}, {Name: "g", Arguments: `{"k":"v"}`}}, []string{"a", "b"}},
		{"no index no id: continuation of the last call", [][]openai.ToolCall{
			{tc(nil, "", "f", `{"a"`)}, {tc(nil, "", "", `:1}`)},
		}, []openai.FunctionCall{{Name: "f", Arguments: `{"a":1}`}}, []string{""}},
		{"id by later fragment with id only", [][]openai.ToolCall{
			{tc(nil, "a", "f", `{`)}, {tc(nil, "a", "", `}`)},
		}, []openai.FunctionCall{{Name: "f", Arguments: `{}`}}, []string{"a"}},
		{"non-zero based index", [][]openai.ToolCall{
			{tc(idx(3), "a", "f", "")}, {tc(idx(5), "b", "g", "")}, {tc(idx(3), "", "", "1")}, {tc(idx(5), "", "", "2")},
		}, []openai.FunctionCall{{Name: "f", Arguments: "1"}, {Name: "g", Arguments: "2"}}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a accumulator
			var firsts int
			for _, calls := range tt.chunks {
				ch := streamChunk{Choices: []streamChoice{{Delta: streamDelta{ToolCalls: calls}}}}
				if err := a.add(&ch, func(d Delta) error {
					if d.ToolCall != nil && d.ToolCall.First {
						firsts++
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			r := a.result()
			if len(r.ToolCalls) != len(tt.want) || firsts != len(tt.want) {
				t.Fatalf("calls %+v, %d first deltas", r.ToolCalls, firsts)
			}
			for i, w := range tt.want {
				got := r.ToolCalls[i]
				if got.Function != w {
					t.Errorf("call %d = %+v, want %+v", i, got.Function, w)
				}
				if tt.ids[i] == "" && !strings.HasPrefix(got.ID, "call_") || tt.ids[i] != "" && got.ID != tt.ids[i] {
					t.Errorf("call %d id %q", i, got.ID)
				}
			}
		})
	}
}

func TestAccumulatorIgnoresOtherChoicesAndKeepsUsage(t *testing.T) {
	var a accumulator
	lines := []string{
		`{"model":"m","choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"zzz"}}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":"stop"}]}`,
		`{"model":"other","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3}}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":null}]}`,
	}
	var ch streamChunk // reused, as in the client
	for _, l := range lines {
		if err := ch.decode([]byte(l)); err != nil {
			t.Fatal(err)
		}
		if err := a.add(&ch, func(Delta) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	r := a.result()
	if r.Content != "ano" || r.FinishReason != "stop" || r.Model != "m" || r.Usage != (Usage{PromptTokens: 2, CompletionTokens: 3, TotalTokens: 5}) {
		t.Fatalf("result %+v", r)
	}
}

func TestFromStatus(t *testing.T) {
	tests := []struct {
		status    int
		typ, code string
		kind      Kind
		retryable bool
	}{
		{401, "", "invalid_api_key", KindAuth, false},
		{403, "", "", KindAuth, false},
		{400, "", "", KindBadRequest, false},
		{404, "", "model_not_found", KindBadRequest, false},
		{408, "", "", KindTimeout, false},
		{429, "requests", "rate_limit_exceeded", KindRateLimit, true},
		{429, "insufficient_quota", "insufficient_quota", KindQuota, false},
		{500, "server_error", "", KindServer, true},
		{503, "", "", KindServer, true},
		{504, "", "", KindServer, true},
		{0, "server_error", "", KindServer, true},
		{0, "", "rate_limit_exceeded", KindRateLimit, true},
	}
	for _, tt := range tests {
		e := fromStatus(tt.status, "m", tt.typ, tt.code, "")
		if e.Kind != tt.kind || e.Retryable() != tt.retryable || e.Status != tt.status {
			t.Errorf("fromStatus(%d, %q, %q) = %+v", tt.status, tt.typ, tt.code, e)
		}
	}
}

func TestClassify(t *testing.T) {
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	timedOut, cancel2 := context.WithTimeoutCause(bg, 0, &boundError{bound: boundCall, d: time.Second})
	defer cancel2()
	tests := []struct {
		name         string
		parent, call context.Context
		err          error
		kind         Kind
	}{
		{"cancelled", cancelled, cancelled, errors.New("read: use of closed connection"), KindCancelled},
		{"call timeout", bg, timedOut, fmt.Errorf("x: %w", context.DeadlineExceeded), KindTimeout},
		{"api error", bg, bg, &openai.APIError{HTTPStatusCode: 500, Message: "boom"}, KindServer},
		{"request error", bg, bg, &openai.RequestError{HTTPStatusCode: 502, Body: []byte("<html>bad gateway</html>")}, KindServer},
		{"unexpected eof", bg, bg, io.ErrUnexpectedEOF, KindConnection},
		{"truncated", bg, bg, errStreamTruncated, KindConnection},
		{"too many empty", bg, bg, openai.ErrTooManyEmptyStreamMessages, KindBadResponse},
		{"reasoning validation", bg, bg, openai.ErrReasoningModelMaxTokensDeprecated, KindBadRequest},
		{"other", bg, bg, errors.New("tls: bad certificate"), KindConnection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify(tt.parent, tt.call, tt.err, "")
			if e.Kind != tt.kind {
				t.Fatalf("kind %s, want %s (%v)", e.Kind, tt.kind, e)
			}
			if e.UserMessage() == "" || bytes.Contains([]byte(e.Error()), []byte("<nil>")) {
				t.Fatalf("texts %q / %q", e.UserMessage(), e.Error())
			}
		})
	}
}
