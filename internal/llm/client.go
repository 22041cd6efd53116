package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/propagation"
)

// Defaults applied to zero Config fields.
const (
	DefaultBaseURL      = "https://api.openai.com/v1"
	DefaultCallTimeout  = 120 * time.Second
	DefaultIdleTimeout  = 60 * time.Second
	DefaultMaxRetries   = 2
	DefaultRetryBackoff = 500 * time.Millisecond
)

// maxRetryAfter is the longest Retry-After the client waits for; a longer
// one ends the call with the rate limit error.
const maxRetryAfter = 30 * time.Second

// Option customises a Client.
type Option func(*options)

type options struct {
	httpClient *http.Client
	logger     *slog.Logger
}

// WithHTTPClient sets the HTTP client (default: a NewHTTPClient of its
// own; share one between clients to share its connection pool). Whatever
// its CheckRedirect, the client follows no redirect.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) { o.httpClient = hc }
}

// WithLogger sets the logger for retries and call summaries (default:
// slog.Default()). Nothing secret is logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// client is the Client: streamed calls are sent and read by this
// package (streamhttp.go, reqencode.go, ssereader.go), non-streamed ones
// by go-openai.
type client struct {
	oc      *openai.Client
	doer    *doer       // the HTTP client of both
	chatURL string      // base URL + /chat/completions
	header  http.Header // the headers of a streamed request
	schemas validJSON   // the tool schemas of its requests found valid
	apiKey  string
	model   string
	timeout time.Duration // CallTimeout
	idle    time.Duration // IdleTimeout
	retries int
	backoff time.Duration
	maxAns  int // MaxAnswerBytes
	log     *slog.Logger
}

// NewClient builds a Client for cfg. It fails on a missing model or an
// invalid base URL; an empty API key is allowed (local servers).
func NewClient(cfg Config, opts ...Option) (Client, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.httpClient == nil {
		o.httpClient = NewHTTPClient()
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm config: model is empty")
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm config: base URL %q is not an http(s) URL", redactURL(base))
	}
	c := &client{
		apiKey:  cfg.APIKey,
		model:   cfg.Model,
		timeout: cfg.CallTimeout,
		idle:    cfg.IdleTimeout,
		retries: cfg.MaxRetries,
		backoff: cfg.RetryBackoff,
		maxAns:  cfg.MaxAnswerBytes,
		log:     o.logger,
	}
	if c.maxAns <= 0 {
		c.maxAns = DefaultMaxAnswerBytes
	}
	if c.timeout <= 0 {
		c.timeout = DefaultCallTimeout
	}
	if c.idle <= 0 {
		c.idle = min(DefaultIdleTimeout, c.timeout)
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultMaxRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.backoff <= 0 {
		c.backoff = DefaultRetryBackoff
	}
	// A copy shares the transport (its pool) and follows no redirect.
	hc := *o.httpClient
	hc.CheckRedirect = refuseRedirect
	c.doer = &doer{hc: &hc}
	c.chatURL = base + chatCompletionsPath
	c.header = streamHeader(cfg.APIKey)
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = base
	oc.HTTPClient = c.doer
	c.oc = openai.NewClientWithConfig(oc)
	return c, nil
}

// redactURL keeps scheme and host of a URL for an error message.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(unparsable)"
	}
	return u.Scheme + "://" + u.Host
}

// Model is the configured model name.
func (c *client) Model() string { return c.model }

// Stream runs a streamed call; see Client.
func (c *client) Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Result, error) {
	oreq, err := c.request(req, true)
	if err != nil {
		return &Result{}, err
	}
	// Checked and encoded once for every attempt; an error is the first
	// attempt's, as when go-openai built the request.
	body, bodyErr := streamBody(&oreq, &c.schemas)
	if onDelta == nil {
		onDelta = func(Delta) error { return nil }
	}
	acc := &accumulator{budget: budget{max: c.maxAns}}
	return c.run(ctx, boundFirst, acc, func(actx context.Context, st *attemptState) error {
		if bodyErr != nil {
			return bodyErr
		}
		return c.streamOnce(actx, st, body, acc, onDelta)
	})
}

// Complete runs a non-streamed call; see Client.
func (c *client) Complete(ctx context.Context, req Request) (*Result, error) {
	oreq, err := c.request(req, false)
	if err != nil {
		return &Result{}, err
	}
	acc := &accumulator{}
	var res *Result
	r, err := c.run(ctx, boundCall, acc, func(actx context.Context, st *attemptState) error {
		// The body is read up to what an answer at the cap can take.
		st.bodyLimit, st.maxAnswer = wireLimit(c.maxAns), c.maxAns
		res = nil
		resp, err := c.oc.CreateChatCompletion(actx, oreq)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && st.body != nil && st.body.eof {
				// The whole body arrived: it is truncated JSON, not a lost connection.
				return &Error{Kind: KindBadResponse, Detail: "the answer is not complete JSON"}
			}
			return err
		}
		res, err = completionResult(&resp)
		if err == nil && cutResult(res, c.maxAns) {
			return answerTooLarge(c.maxAns)
		}
		return err
	})
	if err != nil {
		if res != nil {
			return res, err // cut at the cap
		}
		return r, err
	}
	return res, nil
}

// completionResult converts a non-streamed answer.
func completionResult(resp *openai.ChatCompletionResponse) (*Result, error) {
	if len(resp.Choices) == 0 {
		return nil, &Error{Kind: KindBadResponse, Detail: "the answer has no choices"}
	}
	m := resp.Choices[0].Message
	content := m.Content
	if content == "" && m.Refusal != "" {
		content = m.Refusal
	}
	r := &Result{
		Content:      content,
		Reasoning:    m.ReasoningContent,
		FinishReason: string(resp.Choices[0].FinishReason),
		Model:        resp.Model,
		Usage: Usage{
			PromptTokens:     resp.Usage.PromptTokens,
			CompletionTokens: resp.Usage.CompletionTokens,
			TotalTokens:      resp.Usage.TotalTokens,
		},
	}
	if r.Usage.TotalTokens == 0 {
		r.Usage.TotalTokens = r.Usage.PromptTokens + r.Usage.CompletionTokens
	}
	if d := resp.Usage.PromptTokensDetails; d != nil {
		r.Usage.CachedTokens = d.CachedTokens
	}
	if lp := resp.Choices[0].LogProbs; lp != nil {
		for _, t := range lp.Content {
			r.LogProbs = append(r.LogProbs, tokenLogProb(t))
		}
	}
	if len(m.ToolCalls) > 0 {
		r.ToolCalls = make([]openai.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tc.Index = nil
			if tc.Type == "" {
				tc.Type = openai.ToolTypeFunction
			}
			r.ToolCalls[i] = tc
		}
	}
	return r, nil
}

// callbackError carries an error returned by the caller's onDelta.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// run executes attempts under the call's bounds (see watch; first is
// boundFirst for a stream, boundCall otherwise), retrying retryable
// failures as long as nothing was delivered. Retries only happen before
// the first token, so they all fit in the first bound.
func (c *client) run(ctx context.Context, first bound, acc *accumulator, attempt func(context.Context, *attemptState) error) (*Result, error) {
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	w := startWatch(cancel, first, c.timeout, c.idle)
	defer w.stop()
	for n := 1; ; n++ {
		acc.reset()
		st := &attemptState{watch: w}
		err := attempt(context.WithValue(callCtx, attemptKey{}, st), st)
		if err == nil {
			res := acc.result()
			c.log.Debug("llm call done", "model", c.model, "attempts", n,
				"duration", time.Since(start), "prompt_tokens", res.Usage.PromptTokens,
				"completion_tokens", res.Usage.CompletionTokens)
			return res, nil
		}
		var cb *callbackError
		if errors.As(err, &cb) {
			return acc.result(), cb.err
		}
		le := classify(ctx, callCtx, err, c.apiKey)
		le.Attempts = n
		if le.RetryAfter == 0 {
			le.RetryAfter = st.retryAfter
		}
		wait, ok := c.retryDelay(callCtx, start.Add(c.timeout), le, n, acc.delivered)
		if !ok {
			return acc.result(), le
		}
		c.log.Warn("llm call retry", "model", c.model, "kind", string(le.Kind), "status", le.Status,
			"attempt", n, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-callCtx.Done():
			t.Stop()
			le := classify(ctx, callCtx, callCtx.Err(), c.apiKey)
			le.Attempts = n
			return acc.result(), le
		}
	}
}

// retryDelay decides whether attempt n is retried and after how long; a
// retry must start before limit (the end of the first bound) and the
// deadline of ctx.
func (c *client) retryDelay(ctx context.Context, limit time.Time, le *Error, n int, delivered bool) (time.Duration, bool) {
	if delivered || !le.Retryable() || n > c.retries {
		return 0, false
	}
	wait := min(c.backoff<<min(n-1, 16), maxRetryAfter)
	wait += time.Duration(rand.Int64N(int64(wait)/5 + 1)) // up to +20% jitter
	if le.RetryAfter > 0 {
		if le.RetryAfter > maxRetryAfter {
			return 0, false
		}
		wait = max(wait, le.RetryAfter)
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(limit) {
		limit = dl
	}
	if time.Until(limit) <= wait {
		return 0, false
	}
	return wait, true
}

// streamOnce runs one streamed attempt, posting body.
func (c *client) streamOnce(ctx context.Context, st *attemptState, body []byte,
	acc *accumulator, onDelta func(Delta) error) error {
	resp, err := c.openStream(ctx, body)
	if err != nil {
		return err
	}
	stream := newSSEReader(resp.Body, c.maxAns)
	defer func() {
		_ = resp.Body.Close()
		stream.release()
	}()
	out := deltaOut{watch: st.watch, onDelta: onDelta}
	err = readChunks(stream, st, acc, &out)
	var cbErr *callbackError
	if !errors.As(err, &cbErr) {
		// What arrived before the end (or the failure) goes out first.
		if ferr := out.flush(); ferr != nil {
			return ferr
		}
	}
	return err
}

// readChunks reads the chunks of one attempt into acc, which emits the
// increments; before each wait for the server, what emit holds goes out.
func readChunks(stream *sseReader, st *attemptState, acc *accumulator, emit *deltaOut) error {
	var chunk streamChunk
	for {
		if !stream.ready() {
			if err := emit.flush(); err != nil {
				return err
			}
		}
		st.watch.waiting()
		raw, err := stream.next()
		st.watch.arrived()
		if errors.Is(err, io.EOF) {
			done := st.body == nil || st.body.endedWithDone()
			if st.body != nil {
				st.body.drain()
			}
			switch {
			case done:
				return nil
			case acc.finish != "":
				return nil // no [DONE], but the answer was complete
			case acc.chunks == 0:
				return &Error{Kind: KindBadResponse, Detail: "the stream held no chunk"}
			}
			return errStreamTruncated
		}
		if err != nil {
			return err
		}
		if err := chunk.decode(raw); err != nil {
			return err
		}
		if err := acc.add(&chunk, emit.emit); err != nil {
			return err
		}
	}
}

// deltaOut hands the increments of a stream to onDelta one behind: an
// increment is held until the next one comes out of data already read
// (it then goes with More) or until the stream is about to wait for the
// server or ends (flush: it goes without More). The first increment goes
// at once, without More: the first token waits for nothing.
type deltaOut struct {
	watch     *watch
	onDelta   func(Delta) error
	held      Delta
	holding   bool
	delivered bool
}

// emit delivers the increment held so far, with More, and holds d.
func (o *deltaOut) emit(d Delta) error {
	if !o.delivered {
		o.held, o.holding = d, true
		return o.flush()
	}
	if o.holding {
		o.held.More = true
		if err := o.deliver(); err != nil {
			return err
		}
	}
	o.held, o.holding = d, true
	return nil
}

// flush delivers the increment held, without More.
func (o *deltaOut) flush() error {
	if !o.holding {
		return nil
	}
	o.held.More = false
	return o.deliver()
}

func (o *deltaOut) deliver() error {
	o.holding, o.delivered = false, true
	o.watch.token()
	d := o.held
	o.held = Delta{}
	if err := o.onDelta(d); err != nil {
		return &callbackError{err: err}
	}
	return nil
}

// reasoningModel reports models that take max_completion_tokens and
// reject max_tokens.
func reasoningModel(model string) bool {
	for _, p := range [...]string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// request converts a Request to go-openai's.
func (c *client) request(req Request, stream bool) (openai.ChatCompletionRequest, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	if len(req.Messages) == 0 {
		return openai.ChatCompletionRequest{}, &Error{Kind: KindBadRequest, Detail: "the request has no messages"}
	}
	if req.MaxTokens < 0 {
		return openai.ChatCompletionRequest{}, &Error{Kind: KindBadRequest, Detail: "max tokens is negative"}
	}
	o := openai.ChatCompletionRequest{
		Model:    model,
		Messages: req.Messages,
		Stop:     req.Stop,
		Stream:   stream,
	}
	if len(req.Tools) > 0 {
		o.Tools = req.Tools
	}
	choice, err := toolChoice(req.ToolChoice, req.Tools)
	if err != nil {
		return openai.ChatCompletionRequest{}, err
	}
	o.ToolChoice = choice
	if stream {
		o.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	applyOptions(&o, &req.Options)
	if t := req.Temperature; t != nil {
		switch {
		case *t < 0 || *t > 2 || math.IsNaN(float64(*t)):
			return openai.ChatCompletionRequest{}, &Error{Kind: KindBadRequest,
				Detail: fmt.Sprintf("temperature %v is outside [0, 2]", *t)}
		case *t == 0:
			// go-openai omits a zero temperature; this is the documented way
			// to send (practically) zero.
			o.Temperature = math.SmallestNonzeroFloat32
		default:
			o.Temperature = *t
		}
	}
	if req.MaxTokens > 0 {
		if reasoningModel(model) {
			o.MaxCompletionTokens = req.MaxTokens
		} else {
			// max_tokens is what most OpenAI-compatible servers understand.
			//lint:ignore SA1019 deliberate: compatible servers often ignore max_completion_tokens
			o.MaxTokens = req.MaxTokens
		}
	}
	return o, nil
}

// toolChoice converts Request.ToolChoice to the tool_choice go-openai
// sends: nil (omitted), a string, or an openai.ToolChoice value (never a
// typed nil, which would be sent as null).
func toolChoice(choice any, tools []openai.Tool) (any, error) {
	var named openai.ToolChoice
	switch c := choice.(type) {
	case nil:
		return nil, nil
	case string:
		switch c {
		case "":
			return nil, nil
		case "none", "auto":
			if len(tools) == 0 {
				return nil, nil
			}
			return c, nil
		case "required":
			if len(tools) == 0 {
				return nil, &Error{Kind: KindBadRequest, Detail: `tool choice "required" without any tool`}
			}
			return c, nil
		}
		return nil, &Error{Kind: KindBadRequest,
			Detail: fmt.Sprintf("tool choice %q is not none, auto or required", clipDetail(c))}
	case openai.ToolChoice:
		named = c
	case *openai.ToolChoice:
		if c == nil {
			return nil, nil
		}
		named = *c
	default:
		return nil, &Error{Kind: KindBadRequest, Detail: fmt.Sprintf("tool choice of type %T is not supported", choice)}
	}
	if named.Type == "" {
		named.Type = openai.ToolTypeFunction
	}
	if named.Type != openai.ToolTypeFunction {
		return nil, &Error{Kind: KindBadRequest, Detail: fmt.Sprintf("tool choice type %q is not function", clipDetail(string(named.Type)))}
	}
	for _, t := range tools {
		if t.Function != nil && t.Function.Name == named.Function.Name && named.Function.Name != "" {
			return named, nil
		}
	}
	return nil, &Error{Kind: KindBadRequest,
		Detail: fmt.Sprintf("tool choice names function %q, which is not among the tools", clipDetail(named.Function.Name))}
}

// clipDetail bounds a caller-supplied value quoted in an error detail.
func clipDetail(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// attemptKey is the context key of an attempt's *attemptState.
type attemptKey struct{}

// attemptState is what the transport observed during one attempt.
type attemptState struct {
	retryAfter time.Duration
	body       *trackedBody
	watch      *watch // the call's bounds
	// bodyLimit bounds the body of a non-streamed answer; 0: none.
	bodyLimit int64
	// maxAnswer is the cap the limit derives from, for its error.
	maxAnswer int
}

// doer is the HTTP client of both paths (go-openai's for non-streamed
// calls, openStream's for streamed ones): it refuses redirects, bounds
// what is read of an error body and of a non-streamed answer, records
// Retry-After and watches the stream's end for the attempt in the request
// context.
type doer struct{ hc *http.Client }

// Do sends req, with the W3C traceparent of the span in its context when
// there is one (tracing on; see package telemetry).
func (d *doer) Do(req *http.Request) (*http.Response, error) {
	propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	resp, err := d.hc.Do(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		_ = resp.Body.Close()
		return nil, &Error{Kind: KindBadResponse, Status: resp.StatusCode, Detail: errRedirect.Error(),
			user: fmt.Sprintf("The LLM provider answered with a redirect (HTTP %d), which is not followed: check the base URL of the configuration.", resp.StatusCode)}
	}
	if resp.StatusCode >= 400 {
		// go-openai reads an error body whole: it gets the first
		// maxErrorBody bytes.
		resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, maxErrorBody), Closer: resp.Body}
	}
	st, _ := req.Context().Value(attemptKey{}).(*attemptState)
	if st == nil {
		return resp, nil
	}
	if resp.StatusCode >= 400 {
		st.retryAfter = parseRetryAfter(resp.Header, time.Now())
		return resp, nil
	}
	var body io.ReadCloser = resp.Body
	if st.bodyLimit > 0 {
		body = &cappedBody{rc: body, left: st.bodyLimit, err: answerTooLarge(st.maxAnswer)}
	}
	st.body = &trackedBody{rc: body}
	resp.Body = st.body
	return resp, nil
}

// limitedBody is a response body read through a LimitReader.
type limitedBody struct {
	io.Reader
	io.Closer
}

// parseRetryAfter reads retry-after-ms or Retry-After (seconds or date).
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// tailSize is how much of the body's end trackedBody keeps.
const tailSize = 32

// trackedBody remembers the last bytes of a stream so that a clean end of
// the connection can be told apart from a stream that ended with [DONE].
type trackedBody struct {
	rc   io.ReadCloser
	tail [tailSize]byte
	n    int
	eof  bool
}

// Read reads from the response body.
func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.keep(p[:n])
	}
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *trackedBody) keep(p []byte) {
	if len(p) >= tailSize {
		b.n = copy(b.tail[:], p[len(p)-tailSize:])
		return
	}
	if over := b.n + len(p) - tailSize; over > 0 {
		copy(b.tail[:], b.tail[over:b.n])
		b.n -= over
	}
	b.n += copy(b.tail[b.n:], p)
}

// Close closes the response body.
func (b *trackedBody) Close() error { return b.rc.Close() }

// Bounds of trackedBody.drain.
const (
	drainWait  = 100 * time.Millisecond
	drainBytes = 4 << 10
)

// drain reads the end of a stream that stopped at data: [DONE] before its
// body ended (the end of the chunked body usually follows in the next
// packet), so that the connection goes back to the idle pool instead of
// being closed: a body closed before its end costs a new connection, with
// its handshakes, on the next call. A server that sends more than
// drainBytes or does not end the body within drainWait loses the
// connection, as before.
func (b *trackedBody) drain() {
	if b.eof {
		return
	}
	t := time.AfterFunc(drainWait, func() { _ = b.rc.Close() })
	_, _ = io.CopyN(io.Discard, b, drainBytes)
	t.Stop()
}

// endedWithDone reports whether the stream ended with "data: [DONE]" (the
// reader stops at [DONE] before the body ends, or the body's last line is it).
func (b *trackedBody) endedWithDone() bool {
	if !b.eof {
		return true
	}
	t := bytes.TrimRight(b.tail[:b.n], " \t\r\n")
	rest, ok := bytes.CutSuffix(t, []byte("[DONE]"))
	if !ok {
		return false
	}
	return bytes.HasSuffix(bytes.TrimRight(rest, " \t"), []byte("data:"))
}
