package gateway

import (
	"crypto/rand"
	"encoding/json"
	"net/http"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/llm"

	openai "github.com/sashabaranov/go-openai"
)

// Usage is the token usage of a response, summed over every LLM call of
// the agent run.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CostUSD is what the run's LLM calls cost, only when the client asked
	// for it (HeaderIncludeCost, stream_options.include_cost): a number,
	// or null when the model has no prices.
	CostUSD Cost `json:"cost_usd,omitempty"`
}

// Cost is the cost_usd of a usage as JSON text: a number, or null when it
// is unknown; empty when not asked for (and then left out).
type Cost string

// MarshalJSON writes the text as it is.
func (c Cost) MarshalJSON() ([]byte, error) {
	if c == "" {
		return []byte("null"), nil
	}
	return []byte(c), nil
}

// UnmarshalJSON keeps the JSON text.
func (c *Cost) UnmarshalJSON(b []byte) error {
	*c = Cost(b)
	return nil
}

func usageOf(u llm.Usage) Usage {
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: total}
}

// Wire types of chat.completion.chunk and chat.completion.
type (
	chunk struct {
		ID      string        `json:"id"`
		Object  string        `json:"object"`
		Created int64         `json:"created"`
		Model   string        `json:"model"`
		Choices []chunkChoice `json:"choices"`
		// Usage is null on every chunk but the usage chunk when the client
		// asked for usage, absent otherwise (as OpenAI does).
		Usage json.RawMessage `json:"usage,omitempty"`
	}
	chunkChoice struct {
		Index        int       `json:"index"`
		Delta        delta     `json:"delta"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	delta struct {
		Role             string          `json:"role,omitempty"`
		Content          *string         `json:"content,omitempty"`
		ReasoningContent string          `json:"reasoning_content,omitempty"`
		ToolCalls        []deltaToolCall `json:"tool_calls,omitempty"`
	}
	deltaToolCall struct {
		Index    int           `json:"index"`
		ID       string        `json:"id,omitempty"`
		Type     string        `json:"type,omitempty"`
		Function deltaFunction `json:"function"`
	}
	deltaFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}

	completion struct {
		ID      string             `json:"id"`
		Object  string             `json:"object"`
		Created int64              `json:"created"`
		Model   string             `json:"model"`
		Choices []completionChoice `json:"choices"`
		Usage   Usage              `json:"usage"`
	}
	completionChoice struct {
		Index        int           `json:"index"`
		Message      message       `json:"message"`
		Logprobs     *logprobsBody `json:"logprobs"`
		FinishReason string        `json:"finish_reason"`
	}
	// logprobsBody is choices[].logprobs: the content tokens' log
	// probabilities (refusal is always null: a refusal is content here).
	logprobsBody struct {
		Content []llm.TokenLogProb `json:"content"`
		Refusal []llm.TokenLogProb `json:"refusal"`
	}
	message struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent string     `json:"reasoning_content,omitempty"`
		Refusal          *string    `json:"refusal"`
		ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	}
	toolCall struct {
		ID       string        `json:"id"`
		Type     string        `json:"type"`
		Function deltaFunction `json:"function"`
	}
)

// completionID returns a new chat completion id.
func completionID() string { return "chatcmpl-" + rand.Text() }

func (g *Gateway) completions(w http.ResponseWriter, r *http.Request) {
	var body ChatCompletionRequest
	if err := decode(w, r, &body); err != nil {
		g.fail(w, r, err)
		return
	}
	rr, err := body.validate()
	if err != nil {
		g.fail(w, r, err)
		return
	}
	a, model, err := g.resolve(rr)
	if err != nil {
		g.fail(w, r, err)
		return
	}
	rr.req.UserID = userID(r)
	if wantsCost(r) {
		// In a stream, the cost comes in the usage chunk.
		rr.includeCost, rr.includeUsage = true, rr.includeUsage || rr.stream
	}
	keySlots(r, &rr.req)
	w.Header().Set(HeaderAgentID, a.ID)
	if !g.admit(w, r) {
		return
	}
	if rr.stream {
		g.streamCompletion(w, r, a, model, rr)
		return
	}
	g.completeOnce(w, r, model, rr)
}

// completionStream encodes the events of one run as chunks.
type completionStream struct {
	st           *streamer
	id           string
	created      int64
	model        string
	includeUsage bool
	// logprobs: content chunks carry the model's log probabilities.
	logprobs bool
	act      activity
	text     steps
	tokens   *tokenChunks
	// calls are the client tool calls streamed so far, by message id and
	// index in the model's message; each gets the next OpenAI index.
	calls map[callKey]*clientCall
	// noToolCalls drops client tool calls (tool_choice "none"; see
	// toolCallsOff).
	noToolCalls bool
}

type callKey struct {
	msg   string
	index int
}

type clientCall struct {
	index int
	sent  int // bytes of the arguments already sent
}

func (cs *completionStream) chunk(d delta, finish *string) chunk {
	c := chunk{ID: cs.id, Object: "chat.completion.chunk", Created: cs.created, Model: cs.model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
	if cs.includeUsage {
		c.Usage = json.RawMessage("null")
	}
	return c
}

// emit sends the chunks of ev: queued when another event follows at once
// (ev.More), else flushed with whatever the events before queued.
func (cs *completionStream) emit(ev agent.Event) {
	cs.st.event(ev.More, func() { cs.send(ev) })
}

// send sends the chunks of ev.
func (cs *completionStream) send(ev agent.Event) {
	switch ev.Type {
	case agent.EventContent:
		if cs.logprobs {
			cs.st.sendData(cs.tokens.contentLogprobs(cs.text.text(ev), ev.LogProbs))
			return
		}
		cs.st.sendData(cs.tokens.content(cs.text.text(ev)))
		return
	case agent.EventReasoning:
		if ev.Content != "" {
			cs.st.sendData(cs.tokens.reasoning(ev.Content))
		}
		return
	case agent.EventToolCall:
		if tc := ev.ToolCall; tc != nil && tc.Client {
			if !cs.noToolCalls {
				cs.clientToolCall(ev.MessageID, tc)
			}
			return
		}
	case agent.EventError:
		// Sent once the run returned, mapped from res.Err (see
		// streamer.fail): the event does not carry the error.
		return
	case agent.EventDone:
		cs.st.start()
		return
	}
	if text := cs.act.text(ev); text != "" {
		cs.st.send(cs.chunk(delta{ReasoningContent: text}, nil))
	}
}

// clientToolCall passes a client tool call through as delta.tool_calls:
// a first fragment with id, type and name, then the argument fragments.
func (cs *completionStream) clientToolCall(msgID string, tc *agent.ToolCallEvent) {
	if cs.calls == nil {
		cs.calls = map[callKey]*clientCall{}
	}
	k := callKey{msgID, tc.Index}
	cc := cs.calls[k]
	if cc == nil {
		cc = &clientCall{index: len(cs.calls)}
		cs.calls[k] = cc
		cs.st.send(cs.chunk(delta{ToolCalls: []deltaToolCall{{Index: cc.index, ID: tc.ID, Type: "function",
			Function: deltaFunction{Name: tc.Name}}}}, nil))
	}
	if len(tc.Arguments) > cc.sent {
		frag := tc.Arguments[cc.sent:]
		cc.sent = len(tc.Arguments)
		cs.st.send(cs.chunk(delta{ToolCalls: []deltaToolCall{{Index: cc.index, Function: deltaFunction{Arguments: frag}}}}, nil))
	}
}

func (g *Gateway) streamCompletion(w http.ResponseWriter, r *http.Request, a *agent.Agent, model string, rr *runRequest) {
	ctx, cancel := g.runContext(r)
	defer cancel()
	cs := &completionStream{id: completionID(), created: g.o.Now().Unix(), model: model, includeUsage: rr.includeUsage,
		noToolCalls: rr.toolCallsOff(), logprobs: rr.logprobs}
	cs.tokens = newTokenChunks(cs.id, cs.created, cs.model, cs.includeUsage)
	cs.st = &streamer{w: w, heartbeat: g.o.Heartbeat, cancel: cancel, noRetry: mayHaveSideEffects(a), opened: func() {
		_ = cs.st.s.QueueData(cs.tokens.role())
	}}
	defer cs.st.close()
	defer func() {
		if p := recover(); p != nil {
			g.recoverStream(w, r, cs.st, p)
		}
	}()

	res, err := g.runStateless(ctx, r, rr.req, cs.emit)
	if err != nil {
		if !cs.st.started() {
			g.failRun(w, r, err)
			return
		}
		// Not expected (RunStateless reports late failures as events).
		g.logger(r).ErrorContext(r.Context(), "stateless run failed after events", "err", err)
		g.failStream(r, cs.st, err, "The response failed.")
		cs.st.done()
		return
	}
	if res.Error != "" {
		g.failStream(r, cs.st, res.Err, res.Error)
	} else {
		// The finish chunk, the usage chunk and [DONE] follow one another
		// at once: one write.
		_, finish := g.clientCalls(r, rr, res)
		cs.st.event(true, func() {
			cs.st.sendData(cs.tokens.finish(finish))
			if cs.includeUsage {
				cs.st.sendData(cs.tokens.usageChunk(rr.usageOfRun(res)))
			}
		})
	}
	cs.st.done()
}

// failRun answers an error RunStateless returned before any event: nothing
// ran, so the answer says not to retry only when the error itself does
// (openaierr.Write drops any x-should-retry set before).
func (g *Gateway) failRun(w http.ResponseWriter, r *http.Request, err error) {
	openaierr.Write(w, g.runFailed(r, err, ""))
}

// failLate answers a non-streamed run that failed after it started
// (res.Error): with the status of the underlying error (429 with
// Retry-After, 504, 502, ...), else a 500 agent_error, and x-should-retry:
// false once a side-effecting tool ran.
func (g *Gateway) failLate(w http.ResponseWriter, r *http.Request, res *agent.StatelessResult) {
	ae := g.runFailed(r, res.Err, res.Error)
	ae.NoRetry = ae.NoRetry || res.SideEffects
	openaierr.Write(w, ae)
}

// failStream sends the error event of a run that failed after its stream
// started: the error object failRun or failLate would answer for the same
// failure (the status and headers are gone with the stream's start).
func (g *Gateway) failStream(r *http.Request, st *streamer, err error, human string) {
	st.fail(g.runFailed(r, err, human))
}

// runFailed maps a failed run (runFailure) and logs it: a server-side
// failure as a warning, one nothing recognizes as an error.
func (g *Gateway) runFailed(r *http.Request, err error, human string) *openaierr.Error {
	ae, known := runFailure(err, human)
	keyTurnsMessage(r, err, ae)
	switch {
	case !known:
		g.logger(r).ErrorContext(r.Context(), "gateway request failed", "err", err)
	case ae.Status >= 500:
		g.logger(r).WarnContext(r.Context(), "gateway run failed", "status", ae.Status, "code", ae.Code, "err", err)
	}
	return ae
}

// completeOnce runs the agent and answers one chat.completion.
func (g *Gateway) completeOnce(w http.ResponseWriter, r *http.Request, model string, rr *runRequest) {
	ctx, cancel := g.runContext(r)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			g.recoverStream(w, r, nil, p)
		}
	}()
	var act activity
	var reasoning []byte
	var lp *logprobsBody
	if rr.logprobs {
		lp = &logprobsBody{Content: []llm.TokenLogProb{}}
	}
	res := g.runToEnd(ctx, w, r, rr.req, func(ev agent.Event) {
		reasoning = append(reasoning, act.text(ev)...)
		if lp != nil && ev.Type == agent.EventContent {
			lp.Content = append(lp.Content, ev.LogProbs...)
		}
	})
	if res == nil {
		return
	}
	msg := message{Role: "assistant", ReasoningContent: string(reasoning)}
	calls, finish := g.clientCalls(r, rr, res)
	if res.Content != "" || len(calls) == 0 {
		c := res.Content
		msg.Content = &c
	}
	for _, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.ID, Type: "function",
			Function: deltaFunction{Name: c.Function.Name, Arguments: c.Function.Arguments}})
	}
	writeJSON(w, completion{
		ID: completionID(), Object: "chat.completion", Created: g.o.Now().Unix(), Model: model,
		Choices: []completionChoice{{Message: msg, Logprobs: lp, FinishReason: finish}},
		Usage:   rr.usageOfRun(res),
	})
}

// toolCallsOff reports tool_choice "none": the model must not call a tool,
// so a client tool call that a provider returns anyway is dropped (never
// sent as tool_calls, which the client would run) and the answer ends
// with finish_reason "stop".
func (rr *runRequest) toolCallsOff() bool {
	s, _ := rr.req.ToolChoice.(string)
	return s == "none"
}

// clientCalls are the client tool calls a successful run answers and its
// finish reason: none of them, and "stop" for "tool_calls", when
// toolCallsOff.
func (g *Gateway) clientCalls(r *http.Request, rr *runRequest, res *agent.StatelessResult) ([]openai.ToolCall, string) {
	if !rr.toolCallsOff() {
		return res.ClientToolCalls, res.FinishReason
	}
	finish := res.FinishReason
	if len(res.ClientToolCalls) > 0 || finish == string(openai.FinishReasonToolCalls) {
		g.logger(r).WarnContext(r.Context(), "model called client tools despite tool_choice none; calls dropped",
			"calls", len(res.ClientToolCalls))
		finish = string(openai.FinishReasonStop)
	}
	return nil, finish
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		openaierr.Write(w, &openaierr.Error{Status: http.StatusInternalServerError, Message: "Internal server error"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
