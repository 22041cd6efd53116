// Package llmtest is a scripted OpenAI-compatible chat completion server
// for tests: replies are queued (or computed by a handler) and streamed in
// exactly OpenAI's chunk format, with delays, HTTP errors, malformed
// chunks, hang-ups and hangs on demand; requests and client disconnects are
// recorded.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultModel is the model reported when neither the request nor the
// reply names one.
const DefaultModel = "gpt-4o-mini"

// DefaultText is the content of the default reply.
const DefaultText = "Hello from the scripted LLM."

// Request is one recorded POST /v1/chat/completions.
type Request struct {
	// N is the request's position (1-based) among all recorded requests.
	N        int
	Model    string
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	// ToolChoice is tool_choice as sent (nil when absent).
	ToolChoice json.RawMessage
	Stream     bool
	// StreamOptions is the decoded stream_options, nil when absent.
	StreamOptions       *openai.StreamOptions
	Temperature         *float32
	MaxTokens           int
	MaxCompletionTokens int
	// Stop is stop as a list (a single string becomes one element).
	Stop []string
	// ResponseFormat is response_format as sent (nil when absent); the
	// server honours it (see Reply.JSON).
	ResponseFormat *ResponseFormat
	// LogProbs and TopLogProbs are logprobs and top_logprobs; with
	// LogProbs every content token comes with its log probability.
	LogProbs    bool
	TopLogProbs int
	// Seed is seed (nil when absent); the same seed gives the same
	// computed log probabilities and generated JSON.
	Seed *int64
	// TopP, PresencePenalty and FrequencyPenalty are as sent (nil when
	// absent).
	TopP             *float64
	PresencePenalty  *float64
	FrequencyPenalty *float64
	// LogitBias is logit_bias as sent.
	LogitBias map[string]float64
	// ParallelToolCalls is parallel_tool_calls (nil when absent).
	ParallelToolCalls *bool
	// ReasoningEffort, Verbosity and User are as sent.
	ReasoningEffort string
	Verbosity       string
	User            string
	// Header holds the request headers (Authorization included).
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// DecodeError is set when the body was not a valid request (the
	// server answered 400).
	DecodeError string
}

// IncludeUsage reports whether the request asked for the usage chunk.
func (r Request) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// Handler computes the reply to a request (see Server.SetHandler).
type Handler func(req Request) Reply

// Server is a scripted OpenAI-compatible server on httptest.
type Server struct {
	// URL is the server root, e.g. http://127.0.0.1:1234; the OpenAI base
	// URL is URL + "/v1" (BaseURL).
	URL string

	srv       *httptest.Server
	closing   chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	queue    []Reply
	handler  Handler
	def      Reply
	requests []Request
	// prefixes holds the hash of every message prefix a request sent
	// (prefixHashes), with the number of the first request that sent it.
	prefixes    map[uint64]int
	seed        maphash.Seed
	ndisconnect int
	disconnects chan Request
}

// disconnectBuffer is how many disconnects Disconnects buffers.
const disconnectBuffer = 1024

// NewServer starts a server closed in t.Cleanup.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		closing:     make(chan struct{}),
		def:         Reply{Text: DefaultText},
		disconnects: make(chan Request, disconnectBuffer),
		prefixes:    map[uint64]int{},
		seed:        maphash.MakeSeed(),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path),
			"invalid_request_error", "unknown_url")
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the OpenAI base URL of the server (URL + "/v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the server, ending hanging replies first. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Enqueue appends replies; each POST consumes the next one in order.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetHandler sets the function that answers when the queue is empty
// (nil: the default reply).
func (s *Server) SetHandler(h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// SetDefault sets the reply used when the queue is empty and no handler is
// set (initially a text reply of DefaultText).
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = r
}

// Pending is the number of queued replies not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of the recorded requests, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Disconnects delivers each request whose client went away before its
// reply was complete (buffered; tests wait on it to see that a
// cancellation reached the upstream).
func (s *Server) Disconnects() <-chan Request { return s.disconnects }

// DisconnectCount is the number of requests whose client went away before
// the reply was complete.
func (s *Server) DisconnectCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ndisconnect
}

// record stores a request and picks its reply.
func (s *Server) record(req Request) (Request, Reply) {
	hashes := prefixHashes(s.seed, req.Messages)
	s.mu.Lock()
	req.N = len(s.requests) + 1
	s.requests = append(s.requests, req)
	for _, h := range hashes {
		if _, ok := s.prefixes[h]; !ok {
			s.prefixes[h] = req.N
		}
	}
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return req, r
	}
	h, def := s.handler, s.def
	s.mu.Unlock()
	if h != nil {
		return req, h(req)
	}
	return req, def
}

func (s *Server) disconnected(req Request) {
	s.mu.Lock()
	s.ndisconnect++
	s.mu.Unlock()
	select {
	case s.disconnects <- req:
	default:
	}
}

// wireRequest is the decoded request body.
type wireRequest struct {
	Model               string                         `json:"model"`
	Messages            []openai.ChatCompletionMessage `json:"messages"`
	Tools               []openai.Tool                  `json:"tools"`
	ToolChoice          json.RawMessage                `json:"tool_choice"`
	Stream              bool                           `json:"stream"`
	StreamOptions       *openai.StreamOptions          `json:"stream_options"`
	Temperature         *float32                       `json:"temperature"`
	MaxTokens           int                            `json:"max_tokens"`
	MaxCompletionTokens int                            `json:"max_completion_tokens"`
	Stop                json.RawMessage                `json:"stop"`
	ResponseFormat      *ResponseFormat                `json:"response_format"`
	LogProbs            bool                           `json:"logprobs"`
	TopLogProbs         int                            `json:"top_logprobs"`
	Seed                *int64                         `json:"seed"`
	TopP                *float64                       `json:"top_p"`
	PresencePenalty     *float64                       `json:"presence_penalty"`
	FrequencyPenalty    *float64                       `json:"frequency_penalty"`
	LogitBias           map[string]float64             `json:"logit_bias"`
	ParallelToolCalls   *bool                          `json:"parallel_tool_calls"`
	ReasoningEffort     string                         `json:"reasoning_effort"`
	Verbosity           string                         `json:"verbosity"`
	User                string                         `json:"user"`
}

// ResponseFormat is a request's response_format.
type ResponseFormat struct {
	// Type is text, json_object or json_schema.
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema"`
}

// JSONSchema is the json_schema of a response_format.
type JSONSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

// WantsJSON reports whether the request asked for a JSON answer
// (json_object or json_schema).
func (r Request) WantsJSON() bool {
	return r.ResponseFormat != nil && (r.ResponseFormat.Type == "json_object" || r.ResponseFormat.Type == "json_schema")
}

func decodeRequest(body []byte) (Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, fmt.Errorf("decode request: %w", err)
	}
	req := Request{
		Model: w.Model, Messages: w.Messages, Tools: w.Tools, ToolChoice: w.ToolChoice, Stream: w.Stream,
		StreamOptions: w.StreamOptions, Temperature: w.Temperature,
		MaxTokens: w.MaxTokens, MaxCompletionTokens: w.MaxCompletionTokens,
		ResponseFormat: w.ResponseFormat, LogProbs: w.LogProbs, TopLogProbs: w.TopLogProbs, Seed: w.Seed,
		TopP: w.TopP, PresencePenalty: w.PresencePenalty, FrequencyPenalty: w.FrequencyPenalty,
		LogitBias: w.LogitBias, ParallelToolCalls: w.ParallelToolCalls, ReasoningEffort: w.ReasoningEffort,
		Verbosity: w.Verbosity, User: w.User,
	}
	if rf := w.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "json_object":
		case "json_schema":
			if rf.JSONSchema == nil || rf.JSONSchema.Name == "" {
				return req, fmt.Errorf("response_format.json_schema.name: required")
			}
		default:
			return req, fmt.Errorf("response_format.type: invalid value %q", rf.Type)
		}
	}
	if w.TopLogProbs != 0 && !w.LogProbs {
		return req, fmt.Errorf("top_logprobs: logprobs must be true when top_logprobs is set")
	}
	if s := bytes.TrimSpace(w.Stop); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		var one string
		if err := json.Unmarshal(s, &one); err == nil {
			req.Stop = []string{one}
		} else if err := json.Unmarshal(s, &req.Stop); err != nil {
			return req, fmt.Errorf("decode stop: %w", err)
		}
	}
	if len(req.Messages) == 0 {
		return req, fmt.Errorf("messages: at least one message is required")
	}
	return req, nil
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "could not read the request body", "invalid_request_error", "")
		return
	}
	req, decErr := decodeRequest(body)
	req.Header = r.Header.Clone()
	req.Body = body
	if decErr != nil {
		req.DecodeError = decErr.Error()
	}
	req, reply := s.record(req)
	if decErr != nil {
		param := ""
		if i := strings.Index(decErr.Error(), ":"); i > 0 && !strings.HasPrefix(decErr.Error(), "decode") {
			param = decErr.Error()[:i]
		}
		writeErrorParam(w, http.StatusBadRequest, "Invalid request: "+decErr.Error(), "invalid_request_error", "", param)
		return
	}
	x := &exchange{s: s, w: w, r: r, req: req, reply: reply}
	if !x.serve() {
		s.disconnected(req)
	}
}

// writeError answers an OpenAI-shaped error.
func writeError(w http.ResponseWriter, status int, message, typ, code string) {
	writeErrorParam(w, status, message, typ, code, "")
}

// errorObject is OpenAI's {"error":{...}} with param and code null when
// empty.
func errorObject(message, typ, code, param string) []byte {
	var c, p any
	if code != "" {
		c = code
	}
	if param != "" {
		p = param
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": p, "code": c,
	}})
	return body
}

// writeErrorParam answers an OpenAI-shaped error naming param.
func writeErrorParam(w http.ResponseWriter, status int, message, typ, code, param string) {
	body := errorObject(message, typ, code, param)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// defaultError is OpenAI's usual message, type and code for a status.
func defaultError(status int) (message, typ, code string) {
	switch status {
	case http.StatusUnauthorized:
		return "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
			"invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "You are not allowed to use this model.", "invalid_request_error", "model_not_allowed"
	case http.StatusNotFound:
		return "The model does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"
	case http.StatusTooManyRequests:
		return "Rate limit reached for requests. Please try again in 1s.", "requests", "rate_limit_exceeded"
	case http.StatusBadRequest:
		return "Invalid request.", "invalid_request_error", ""
	}
	if status >= 500 {
		return "The server had an error while processing your request. Sorry about that!", "server_error", ""
	}
	return http.StatusText(status), "invalid_request_error", ""
}

// words splits text into chunks of one word each, the spaces before a word
// going with it ("Hello world" -> "Hello", " world"); trailing spaces stay
// with the last word.
func words(text string) []string {
	var out []string
	start := 0
	inWord := false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if space && inWord && strings.TrimSpace(text[i:]) != "" {
			out = append(out, text[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// fragments splits s into pieces of at most n runes.
func fragments(s string, n int) []string {
	var out []string
	runes := 0
	start := 0
	for i := range s {
		if runes == n {
			out = append(out, s[start:i])
			start, runes = i, 0
		}
		runes++
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// sleep waits d, or until the client leaves or the server closes (false).
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	}
}

// hang waits until the client leaves or the server closes.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
}
