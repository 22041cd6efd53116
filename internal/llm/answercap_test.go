package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"agentchat/internal/llm"
)

// hugeAnswer is the size of the answers of the attack: 150 MB.
const hugeAnswer = 150 << 20

// memBound is what reading a huge answer may allocate, all in all.
const memBound = 64 << 20

// hugeServer serves an answer of hugeAnswer bytes, generated as it is
// written (nothing of that size is allocated): write(w) writes it and
// returns the bytes written before the client went away.
func hugeServer(t *testing.T, write func(w io.Writer) int64) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(r.Header.Get("Accept"), "event-stream") {
			w.Header().Set("Content-Type", "application/json")
		}
		written.Store(write(w))
	}))
	t.Cleanup(srv.Close)
	return srv, &written
}

// repeatWrite writes head, then body repeated until n bytes are written
// in all (or the client went away), then tail.
func repeatWrite(w io.Writer, head, body, tail []byte, n int64) int64 {
	var total int64
	put := func(b []byte) bool {
		k, err := w.Write(b)
		total += int64(k)
		return err == nil
	}
	if !put(head) {
		return total
	}
	for total < n {
		if !put(body) {
			return total
		}
	}
	put(tail)
	return total
}

var filler = strings.Repeat("x", 32<<10)

// The 150 MB answers of the attack, each as a model server could send it.
var hugeAnswers = []struct {
	name   string
	stream bool
	write  func(w io.Writer) int64
}{
	{"streamed content in chunks", true, func(w io.Writer) int64 {
		chunk := []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + filler + `"}}]}` + "\n\n")
		return repeatWrite(w, nil, chunk, []byte("data: [DONE]\n\n"), hugeAnswer)
	}},
	{"streamed reasoning in chunks", true, func(w io.Writer) int64 {
		chunk := []byte(`data: {"choices":[{"index":0,"delta":{"reasoning_content":"` + filler + `"}}]}` + "\n\n")
		return repeatWrite(w, nil, chunk, []byte("data: [DONE]\n\n"), hugeAnswer)
	}},
	{"streamed tool-call arguments in chunks", true, func(w io.Writer) int64 {
		head := []byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}` + "\n\n")
		chunk := []byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + filler + `"}}]}}]}` + "\n\n")
		return repeatWrite(w, head, chunk, []byte("data: [DONE]\n\n"), hugeAnswer)
	}},
	{"streamed in one line without newline", true, func(w io.Writer) int64 {
		return repeatWrite(w, []byte(`data: {"choices":[{"index":0,"delta":{"content":"`), []byte(filler), nil, hugeAnswer)
	}},
	{"streamed escapes in one line", true, func(w io.Writer) int64 {
		return repeatWrite(w, []byte(`data: {"choices":[{"index":0,"delta":{"content":"`), []byte(strings.Repeat(`\u0000`, 4096)), nil, hugeAnswer)
	}},
	{"non-streamed", false, func(w io.Writer) int64 {
		return repeatWrite(w, []byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`),
			[]byte(filler), []byte(`"},"finish_reason":"stop"}]}`), hugeAnswer)
	}},
}

// TestHugeAnswerIsCutAtTheCap: a model server sending a 150 MB answer (as
// chunks, as one endless line, or as a non-streamed body) is read up to
// the cap only: the call ends with the too-large error, what was kept and
// delivered is at most the cap, the server could not write more than a
// fraction of the answer, and memory stays bounded.
func TestHugeAnswerIsCutAtTheCap(t *testing.T) {
	for _, tt := range hugeAnswers {
		t.Run(tt.name, func(t *testing.T) {
			srv, written := hugeServer(t, tt.write)
			c := newClient(t, srv.URL+"/v1", func(c *llm.Config) { c.MaxRetries = -1 })

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var delivered int
			var res *llm.Result
			var err error
			if tt.stream {
				res, err = c.Stream(context.Background(), userMsg("hi"), func(d llm.Delta) error {
					delivered += len(d.Content) + len(d.Reasoning)
					if d.ToolCall != nil {
						delivered += len(d.ToolCall.Fragment)
					}
					return nil
				})
			} else {
				res, err = c.Complete(context.Background(), userMsg("hi"))
			}
			runtime.ReadMemStats(&after)
			srv.CloseClientConnections()

			if !errors.Is(err, llm.ErrAnswerTooLarge) {
				t.Fatalf("error %v, want ErrAnswerTooLarge", err)
			}
			if msg := llm.UserMessage(err); !strings.Contains(msg, "LLM_MAX_ANSWER_BYTES") || !strings.Contains(msg, "1 MiB") {
				t.Fatalf("user message %q", msg)
			}
			kept := len(res.Content) + len(res.Reasoning)
			for _, tc := range res.ToolCalls {
				kept += len(tc.Function.Arguments)
			}
			if kept > llm.DefaultMaxAnswerBytes || delivered > llm.DefaultMaxAnswerBytes || delivered != min(kept, delivered) {
				t.Fatalf("kept %d bytes, delivered %d: more than the cap", kept, delivered)
			}
			if tt.stream && !strings.Contains(tt.name, "one line") && (kept < llm.DefaultMaxAnswerBytes-64 || delivered != kept) {
				t.Fatalf("kept %d bytes, delivered %d: want the answer up to the cap", kept, delivered)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > memBound {
				t.Fatalf("reading the answer allocated %d MiB", alloc>>20)
			}
			srv.Close() // waits for the handler
			if n := written.Load(); n > hugeAnswer/4 {
				t.Fatalf("the server wrote %d MiB: the client read on past the cap", n>>20)
			}
		})
	}
}

// TestAnswerCapCuts: the cap counts content, reasoning and tool calls of
// one call together, cuts on a character boundary, and an answer within
// it is whole.
func TestAnswerCapCuts(t *testing.T) {
	const maxBytes = 1024
	long := strings.Repeat("é", 400) // 800 bytes
	tests := []struct {
		name        string
		chunks      []string // delta objects
		content     string
		reasoning   string
		args        []string
		tooLarge    bool
		nonStreamed string // the message object of a non-streamed answer
	}{
		{name: "within the cap", chunks: []string{`{"content":"` + long + `"}`}, content: long},
		{name: "content past the cap, cut on a character",
			chunks:  []string{`{"content":"` + long + `"}`, `{"content":"` + long + `"}`},
			content: long + strings.Repeat("é", 112), tooLarge: true},
		{name: "reasoning and content together",
			chunks:    []string{`{"reasoning_content":"` + long + `"}`, `{"content":"` + long + `"}`},
			reasoning: long, content: strings.Repeat("é", 112), tooLarge: true},
		{name: "tool-call arguments count",
			chunks: []string{`{"content":"` + long + `"}`,
				`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"` + strings.Repeat("a", 300) + `"}}]}`},
			content: long, args: []string{strings.Repeat("a", maxBytes-800-3)}, tooLarge: true},
		{name: "countless empty tool calls count",
			chunks:   []string{emptyCalls(200)},
			tooLarge: true},
		{name: "non-streamed past the cap", nonStreamed: `{"role":"assistant","reasoning_content":"` + long + `","content":"` + long + `"}`,
			reasoning: long, content: strings.Repeat("é", 112), tooLarge: true},
		{name: "non-streamed within the cap", nonStreamed: `{"role":"assistant","content":"` + long + `"}`, content: long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if tt.nonStreamed != "" {
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":`+tt.nonStreamed+`,"finish_reason":"stop"}]}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for _, d := range tt.chunks {
					_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":`+d+`}]}`+"\n\n")
				}
				_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			}))
			defer srv.Close()
			c := newClient(t, srv.URL+"/v1", func(c *llm.Config) { c.MaxAnswerBytes = maxBytes; c.MaxRetries = -1 })
			var res *llm.Result
			var err error
			if tt.nonStreamed != "" {
				res, err = c.Complete(context.Background(), userMsg("hi"))
			} else {
				res, err = c.Stream(context.Background(), userMsg("hi"), nil)
			}
			if errors.Is(err, llm.ErrAnswerTooLarge) != tt.tooLarge || (!tt.tooLarge && err != nil) {
				t.Fatalf("error %v, want too large %v", err, tt.tooLarge)
			}
			if tt.tooLarge && !strings.Contains(llm.UserMessage(err), "1 KiB (LLM_MAX_ANSWER_BYTES)") {
				t.Fatalf("user message %q", llm.UserMessage(err))
			}
			if res.Content != tt.content || res.Reasoning != tt.reasoning || !utf8.ValidString(res.Content) {
				t.Fatalf("content %d bytes, reasoning %d: want %d and %d", len(res.Content), len(res.Reasoning), len(tt.content), len(tt.reasoning))
			}
			total := len(res.Content) + len(res.Reasoning)
			for i, tc := range res.ToolCalls {
				total += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
				if i < len(tt.args) && tc.Function.Arguments != tt.args[i] {
					t.Fatalf("arguments %d: %d bytes, want %d", i, len(tc.Function.Arguments), len(tt.args[i]))
				}
			}
			if total > maxBytes {
				t.Fatalf("kept %d bytes", total)
			}
		})
	}
}

// emptyCalls is a delta of n tool calls without arguments.
func emptyCalls(n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"index":%d,"id":"call_%d_0123456789","type":"function","function":{"name":"f"}}`, i, i)
	}
	return `{"tool_calls":[` + strings.Join(calls, ",") + `]}`
}
