package benche2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LLMOptions shape the scripted LLM's answers.
type LLMOptions struct {
	// Chunks is the number of content chunks of a streamed answer (one
	// word each); the default is DefaultChunks.
	Chunks int
	// ChunkDelay is the pause between two chunks (0: none).
	ChunkDelay time.Duration
	// FirstDelay is the pause before the first content chunk, after the
	// headers and the role chunk (0: none).
	FirstDelay time.Duration
}

// DefaultChunks is the default number of content chunks of an answer.
const DefaultChunks = 20

// PathStats is the scripted LLM's route that returns its Stats as JSON.
const PathStats = "/bench/stats"

// HeaderTarget names the target of a request the load client sends
// through the proxy or straight to the LLM; requests without it come from
// agentchat.
const HeaderTarget = "X-Bench-Target"

// Stats count, per target, the chat completion requests the LLM served
// and how many of them came on a new connection.
type Stats map[string]*ConnStats

// ConnStats are one target's counts.
type ConnStats struct {
	Requests int64 `json:"requests"`
	NewConns int64 `json:"new_conns"`
}

// PathLastRequest is the scripted LLM's own route that returns the body of
// the last chat completion request (?kind=stream: the last streamed one),
// so that the direct calls replay what agentchat sends upstream.
const PathLastRequest = "/bench/last-request"

// LLM is a minimal OpenAI-compatible chat completion server: every
// streamed request gets the same answer of Chunks content chunks in
// OpenAI's chunk format (a role chunk first, a finish chunk, the usage
// chunk when stream_options.include_usage asks, then data: [DONE]), each
// written and flushed on its own; a non-streamed request gets the same
// text as one chat.completion. It is not package llmtest, which lives on
// httptest and a testing.TB, so that it can run as its own process.
type LLM struct {
	o      LLMOptions
	words  []string
	text   string
	seq    atomic.Int64
	mu     sync.Mutex
	last   []byte // body of the last request
	stream []byte // body of the last streamed request
	stats  Stats
}

// connKey is the context key of a connection's request count.
type connKey struct{}

// ConnContext counts the requests of each connection; set it as the
// http.Server's ConnContext so that Stats tells new connections.
func (l *LLM) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, new(atomic.Int64))
}

// count records one request of target.
func (l *LLM) count(r *http.Request) {
	target := r.Header.Get(HeaderTarget)
	if target == "" {
		target = TargetAgentchat
	}
	first := false
	if n, ok := r.Context().Value(connKey{}).(*atomic.Int64); ok {
		first = n.Add(1) == 1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.stats[target]
	if st == nil {
		st = &ConnStats{}
		l.stats[target] = st
	}
	st.Requests++
	if first {
		st.NewConns++
	}
}

// NewLLM returns the scripted LLM handler.
func NewLLM(o LLMOptions) *LLM {
	if o.Chunks <= 0 {
		o.Chunks = DefaultChunks
	}
	l := &LLM{o: o, words: ReplyWords(o.Chunks), stats: Stats{}}
	for _, w := range l.words {
		l.text += w
	}
	return l
}

// ReplyWords returns the n content chunks of the scripted answer.
func ReplyWords(n int) []string {
	base := [...]string{"R1", " and", " R2", " are", " linked", " through", " Ethernet0/0", " on", " both", " sides."}
	out := make([]string, n)
	for i := range out {
		out[i] = base[i%len(base)]
	}
	return out
}

// ServeHTTP serves POST /v1/chat/completions and GET PathLastRequest.
func (l *LLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		l.complete(w, r)
	case r.Method == http.MethodGet && r.URL.Path == PathStats:
		l.mu.Lock()
		b, _ := json.Marshal(l.stats)
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	case r.Method == http.MethodGet && r.URL.Path == PathLastRequest:
		l.mu.Lock()
		b := l.last
		if r.URL.Query().Get("kind") == "stream" {
			b = l.stream
		}
		l.mu.Unlock()
		if b == nil {
			http.Error(w, "no request yet", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	default:
		http.Error(w, `{"error":{"message":"unknown route","type":"invalid_request_error"}}`, http.StatusNotFound)
	}
}

// llmRequest is the part of a request the scripted LLM reads.
type llmRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (l *LLM) complete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return
	}
	l.count(r)
	var req llmRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	l.mu.Lock()
	l.last = body
	if req.Stream {
		l.stream = body
	}
	l.mu.Unlock()
	if req.Model == "" {
		req.Model = "bench-model"
	}
	model, _ := json.Marshal(req.Model)
	id := "chatcmpl-bench" + strconv.FormatInt(l.seq.Add(1), 10)
	created := strconv.FormatInt(time.Now().Unix(), 10)
	if !req.Stream {
		l.completion(w, id, created, model)
		return
	}
	usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	l.streamAnswer(w, r, id, created, model, usage)
}

// completion answers one non-streamed chat.completion.
func (l *LLM) completion(w http.ResponseWriter, id, created string, model []byte) {
	text, _ := json.Marshal(l.text)
	b := make([]byte, 0, 512+len(text))
	b = append(b, `{"id":"`+id+`","object":"chat.completion","created":`+created+`,"model":`...)
	b = append(b, model...)
	b = append(b, `,"system_fingerprint":"fp_bench","choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = append(b, text...)
	b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":`...)
	b = l.appendUsage(b)
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

func (l *LLM) appendUsage(b []byte) []byte {
	return fmt.Appendf(b, `{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, 42, len(l.words), 42+len(l.words))
}

// streamAnswer writes the streamed answer, one flushed write per chunk.
func (l *LLM) streamAnswer(w http.ResponseWriter, r *http.Request, id, created string, model []byte, usage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	usageField := ""
	if usage {
		usageField = `,"usage":null`
	}
	prefix := `data: {"id":"` + id + `","object":"chat.completion.chunk","created":` + created + `,"model":` + string(model) +
		`,"system_fingerprint":"fp_bench","choices":[`
	buf := make([]byte, 0, 512)
	send := func(choices string, extra string) bool {
		buf = append(buf[:0], prefix...)
		buf = append(buf, choices...)
		buf = append(buf, ']')
		buf = append(buf, extra...)
		buf = append(buf, "}\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	pause := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !send(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`, usageField) {
		return
	}
	if !pause(l.o.FirstDelay) {
		return
	}
	for i, word := range l.words {
		if i > 0 && !pause(l.o.ChunkDelay) {
			return
		}
		c, _ := json.Marshal(word)
		if !send(`{"index":0,"delta":{"content":`+string(c)+`},"logprobs":null,"finish_reason":null}`, usageField) {
			return
		}
	}
	if !send(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`, usageField) {
		return
	}
	if usage {
		if !send("", `,"usage":`+string(l.appendUsage(nil))) {
			return
		}
	}
	// [DONE] leaves on its own, before the end of the chunked body (the
	// handler's return), as servers that flush every event send it.
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
	_ = rc.Flush()
}
