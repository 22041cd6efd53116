package llm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// sseStep is one result of a stream reader: a payload or the error that
// ended the reading.
type sseStep struct {
	Data    string
	Payload bool             // a payload (possibly empty) was returned
	EOF     bool             // the error is io.EOF
	TooMany bool             // the error is openai.ErrTooManyEmptyStreamMessages
	API     *openai.APIError // the stream's error object
	Err     string           // the error's text
	Kind    Kind             // an *Error's kind
}

// steps reads with next until an error (at most limit results).
func steps(next func() ([]byte, error), limit int) []sseStep {
	var out []sseStep
	for range limit {
		b, err := next()
		if err == nil {
			out = append(out, sseStep{Data: string(b), Payload: true})
			continue
		}
		s := sseStep{Err: err.Error(), EOF: errors.Is(err, io.EOF),
			TooMany: errors.Is(err, openai.ErrTooManyEmptyStreamMessages)}
		var apiErr *openai.APIError
		if errors.As(err, &apiErr) {
			s.API = apiErr
		}
		var le *Error
		if errors.As(err, &le) {
			s.Kind = le.Kind
		}
		return append(out, s)
	}
	return out
}

// bodyDoer answers every request with body, read step bytes at a time.
type bodyDoer struct {
	body []byte
	step int
}

func (d bodyDoer) Do(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
		Body: io.NopCloser(&chunkedReader{data: d.body, n: d.step})}, nil
}

// goOpenAISteps reads body with go-openai's own stream reader.
func goOpenAISteps(t testing.TB, body []byte, step int) []sseStep {
	t.Helper()
	cfg := openai.DefaultConfig("")
	cfg.HTTPClient = bodyDoer{body: body, step: step}
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(),
		openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	return steps(stream.RecvRaw, 2000)
}

// ourSteps reads body with an sseReader whose buffer holds size bytes.
func ourSteps(body []byte, step, size int) []sseStep {
	s := &sseReader{r: bufio.NewReaderSize(&chunkedReader{data: body, n: step}, size)}
	return steps(s.next, 2000)
}

func TestSSEReader(t *testing.T) {
	long := strings.Repeat("x", 10000)
	errObj := `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`
	tests := []struct {
		name string
		body string
		want []sseStep
	}{
		{"chunks then done", "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n",
			[]sseStep{{Data: `{"a":1}`, Payload: true}, {Data: `{"b":2}`, Payload: true}, {EOF: true, Err: "EOF"}}},
		{"no space after the colon", "data:{\"a\":1}\n\ndata:[DONE]\n",
			[]sseStep{{Data: `{"a":1}`, Payload: true}, {EOF: true, Err: "EOF"}}},
		{"tabs and spaces after the colon", "data: \t {\"a\":1} \t\n",
			[]sseStep{{Data: `{"a":1}`, Payload: true}, {EOF: true, Err: "EOF"}}},
		{"CRLF", "data: x\r\n\r\ndata: [DONE]\r\n\r\n",
			[]sseStep{{Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
		{"comments, event, id, retry and blank lines", ": ping\n\nevent: message\nid: 7\nretry: 100\n\ndata: x\n\n: bye\n",
			[]sseStep{{Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
		{"unicode spaces are trimmed", "\u00a0data: x\u00a0\u2003\n",
			[]sseStep{{Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
		{"empty data", "data:\n\ndata: \n",
			[]sseStep{{Payload: true}, {Payload: true}, {EOF: true, Err: "EOF"}}},
		{"data is case-sensitive", "DATA: x\nData: y\n",
			[]sseStep{{EOF: true, Err: "EOF"}}},
		{"a last line without newline is dropped", "data: x\n\ndata: y",
			[]sseStep{{Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
		{"nothing after done is read", "data: [DONE]\n\ndata: x\n\n",
			[]sseStep{{EOF: true, Err: "EOF"}}},
		{"empty body", "", []sseStep{{EOF: true, Err: "EOF"}}},
		{"a line longer than the buffer", "data: " + long + "\n\ndata: [DONE]\n",
			[]sseStep{{Data: long, Payload: true}, {EOF: true, Err: "EOF"}}},
		{"error event", "data: {\"x\":1}\n\ndata: " + errObj + "\n\n",
			[]sseStep{{Data: `{"x":1}`, Payload: true}, {Err: "error, The server had an error",
				API: &openai.APIError{Message: "The server had an error", Type: "server_error", Code: 0}}}}, // go-openai decodes "code":null as 0
		{"error event at the end of the body", "data:" + errObj + "\n",
			[]sseStep{{Err: "error, The server had an error",
				API: &openai.APIError{Message: "The server had an error", Type: "server_error", Code: 0}}}},
		{"error event without newline is dropped", "data: " + errObj,
			[]sseStep{{EOF: true, Err: "EOF"}}},
		{"error data that is no error object", "data: {\"error\":\"boom\"}\n\ndata: x\n",
			[]sseStep{{Payload: true}, {Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
		{"error event after a comment is not recognized", ": note\ndata: " + errObj + "\n\n",
			[]sseStep{{Payload: true}, {EOF: true, Err: "EOF"}}},
		{"spaced error object is a chunk", "data: { \"error\": {\"message\":\"m\"}}\n",
			[]sseStep{{Data: `{ "error": {"message":"m"}}`, Payload: true}, {EOF: true, Err: "EOF"}}},
		{"error object sent as plain lines", "{\"error\":\n  {\"message\":\"quota\",\n \"code\":429}}\n",
			[]sseStep{{Err: "error, quota", API: &openai.APIError{Message: "quota", Code: 429}}}},
		{"plain JSON that is no error", "{\"choices\":[]}\n", []sseStep{{EOF: true, Err: "EOF"}}},
		{"300 non-data lines are tolerated", strings.Repeat(": ping\n", 300) + "data: x\n",
			[]sseStep{{Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
		{"301 non-data lines end the stream", strings.Repeat("garbage\n", 301) + "data: x\n",
			[]sseStep{{TooMany: true, Err: openai.ErrTooManyEmptyStreamMessages.Error()}}},
		{"the limit counts lines in a row", strings.Repeat(strings.Repeat("\n", 200)+"data: x\n", 3),
			[]sseStep{{Data: "x", Payload: true}, {Data: "x", Payload: true}, {Data: "x", Payload: true}, {EOF: true, Err: "EOF"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, step := range []int{1, 5, 4096} {
				ref := goOpenAISteps(t, []byte(tt.body), step)
				if !reflect.DeepEqual(ref, tt.want) {
					t.Fatalf("step %d: go-openai reads\n%+v\nthe test wants\n%+v", step, ref, tt.want)
				}
				for _, size := range []int{16, 64, sseBufferSize} {
					if got := ourSteps([]byte(tt.body), step, size); !reflect.DeepEqual(got, tt.want) {
						t.Fatalf("step %d buffer %d: read\n%+v\nwant\n%+v", step, size, got, tt.want)
					}
				}
			}
		})
	}
}

// endless is a body that never sends a newline.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestSSEReaderBoundsALine(t *testing.T) {
	s := newSSEReader(endless{}, 0)
	defer s.release()
	_, err := s.next()
	var le *Error
	if !errors.As(err, &le) || le.Kind != KindBadResponse {
		t.Fatalf("error %v", err)
	}
}

func TestSSEReaderBoundsTheErrorLines(t *testing.T) {
	// An error object as plain lines, larger than what is kept, is not
	// looked for; the stream just ends.
	body := "{\"error\":{\"message\":\"" + strings.Repeat("m", maxErrorLines) + "\"}}\n"
	if got := ourSteps([]byte(body), 4096, sseBufferSize); !reflect.DeepEqual(got, []sseStep{{EOF: true, Err: "EOF"}}) {
		t.Fatalf("read %+v", got)
	}
}

func TestSSEReaderReuse(t *testing.T) {
	for range 3 {
		s := newSSEReader(strings.NewReader("{\"error\":\n: x\ndata: a\n\ndata: [DONE]\n"), 0)
		got := steps(s.next, 10)
		s.release()
		want := []sseStep{{Data: "a", Payload: true}, {EOF: true, Err: "EOF"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read %+v", got)
		}
		s = newSSEReader(strings.NewReader("{\"error\":{\"message\":\"m\"}}\n"), 0)
		got = steps(s.next, 10)
		s.release()
		if len(got) != 1 || got[0].API == nil || got[0].API.Message != "m" {
			t.Fatalf("a reused reader kept the state of its last stream: %+v", got)
		}
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"data:x\r\n: c\r\nevent: e\r\n\r\ndata:  [DONE] \r\n",
		"data: {\"error\":{\"message\":\"m\",\"code\":\"c\"}}\n\n",
		"{\"error\":\n{\"message\":[\"a\",\"b\"]}}\n",
		"data: {\"error\":1}\ndata: y\n",
		"\n\n\n\ndata: y",
		"data:\t\f\x0bz\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, step uint8) {
		n := int(step%64) + 1
		want := goOpenAISteps(t, body, n)
		if got := ourSteps(body, n, 16); !reflect.DeepEqual(got, want) {
			t.Fatalf("read\n%+v\ngo-openai reads\n%+v", got, want)
		}
	})
}

// BenchmarkSSERead reads a 20-chunk stream with each reader (go-openai's
// run includes building its one-message request).
func BenchmarkSSERead(b *testing.B) {
	var sb strings.Builder
	for range 20 {
		sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	body := []byte(sb.String())
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := newSSEReader(&chunkedReader{data: body, n: len(body)}, 0)
			for {
				if _, err := s.next(); err != nil {
					break
				}
			}
			s.release()
		}
	})
	b.Run("go-openai", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cfg := openai.DefaultConfig("")
			cfg.HTTPClient = bodyDoer{body: body, step: len(body)}
			stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(),
				openai.ChatCompletionRequest{Model: "m"})
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := stream.RecvRaw(); err != nil {
					break
				}
			}
			stream.Close()
		}
	})
}

// oneRead returns all of its data in one Read, then io.EOF.
type oneRead struct{ data []byte }

func (o *oneRead) Read(p []byte) (int, error) {
	if len(o.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, o.data)
	o.data = o.data[n:]
	return n, nil
}

func TestSSEReaderReady(t *testing.T) {
	tests := []struct {
		name string
		body string // what the first read returns; "data: a" is read first
		want bool
	}{
		{"nothing after", "data: a\n\n", false},
		{"a whole data line after", "data: a\n\ndata: b\n\n", true},
		{"a data line without its newline", "data: a\n\ndata: b", false},
		{"comments and blank lines only", "data: a\n\n: keep-alive\n\nevent: x\n", false},
		{"a data line after a comment", "data: a\n\n: keep-alive\n\ndata:b\n", true},
		{"the end", "data: a\n\ndata: [DONE]\n\n", true},
		{"an error line (next reads one more)", "data: a\n\ndata: {\"error\":{\"message\":\"m\"}}\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSSEReader(&oneRead{data: []byte(tt.body)}, 0)
			defer s.release()
			if b, err := s.next(); err != nil || string(b) != "a" {
				t.Fatalf("first next: %q, %v", b, err)
			}
			if got := s.ready(); got != tt.want {
				t.Fatalf("ready() = %v, want %v", got, tt.want)
			}
		})
	}
}
