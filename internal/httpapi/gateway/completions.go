package gateway

import (
	"encoding/json"
	"net/http"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/httpapi/runstream"
	"agentchat/internal/llm"
	"agentchat/internal/sse"

	openai "github.com/sashabaranov/go-openai"
)

func (g *Gateway) completions(w http.ResponseWriter, r *http.Request) {
	var body openaiwire.ChatCompletionRequest
	if err := decode(w, r, &body); err != nil {
		g.fail(w, r, err)
		return
	}
	rr, err := body.Convert()
	if err != nil {
		g.fail(w, r, err)
		return
	}
	a, model, err := g.resolve(rr)
	if err != nil {
		g.fail(w, r, err)
		return
	}
	rr.Req.UserID = userID(r)
	if wantsCost(r) {
		// In a stream, the cost comes in the usage chunk.
		rr.IncludeCost, rr.IncludeUsage = true, rr.IncludeUsage || rr.Stream
	}
	keySlots(r, &rr.Req)
	w.Header().Set(HeaderAgentID, a.ID)
	if !g.admit(w, r) {
		return
	}
	if rr.Stream {
		g.streamCompletion(w, r, a, model, rr)
		return
	}
	g.completeOnce(w, r, model, rr)
}

// completionStream encodes the events of one run as chunks.
type completionStream struct {
	openaiStream
	head openaiwire.ChunkHead
	// logprobs: content chunks carry the model's log probabilities.
	logprobs bool
	act      openaiwire.Activity
	text     openaiwire.Steps
	tokens   *openaiwire.ChunkEncoder
	// calls are the client tool calls streamed so far, by message id and
	// index in the model's message; each gets the next OpenAI index.
	calls map[callKey]*clientCall
	// noToolCalls drops client tool calls (tool_choice "none"; see
	// RunRequest.ToolCallsOff).
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

// Event writes the chunks of ev.
func (cs *completionStream) Event(w *runstream.Writer, ev agent.Event) {
	switch ev.Type {
	case agent.EventContent:
		if cs.logprobs {
			w.Send(cs.tokens.ContentLogprobs(cs.text.Text(ev), ev.LogProbs))
			return
		}
		w.Send(cs.tokens.Content(cs.text.Text(ev)))
		return
	case agent.EventReasoning:
		if ev.Content != "" {
			w.Send(cs.tokens.Reasoning(ev.Content))
		}
		return
	case agent.EventToolCall:
		if tc := ev.ToolCall; tc != nil && tc.Client {
			if !cs.noToolCalls {
				cs.clientToolCall(w, ev.MessageID, tc)
			}
			return
		}
	case agent.EventError:
		// Sent once the run returned, mapped from res.Err (see
		// openaiStream.fail): the event does not carry the error.
		return
	case agent.EventDone:
		w.Start()
		return
	}
	if text := cs.act.Text(ev); text != "" {
		cs.send(w, cs.head.Chunk(openaiwire.Delta{ReasoningContent: text}, nil))
	}
}

// clientToolCall passes a client tool call through as delta.tool_calls:
// a first fragment with id, type and name, then the argument fragments.
func (cs *completionStream) clientToolCall(w *runstream.Writer, msgID string, tc *agent.ToolCallEvent) {
	if cs.calls == nil {
		cs.calls = map[callKey]*clientCall{}
	}
	k := callKey{msgID, tc.Index}
	cc := cs.calls[k]
	if cc == nil {
		cc = &clientCall{index: len(cs.calls)}
		cs.calls[k] = cc
		cs.send(w, cs.head.Chunk(openaiwire.Delta{ToolCalls: []openaiwire.DeltaToolCall{{Index: cc.index, ID: tc.ID, Type: "function",
			Function: openaiwire.DeltaFunction{Name: tc.Name}}}}, nil))
	}
	if len(tc.Arguments) > cc.sent {
		frag := tc.Arguments[cc.sent:]
		cc.sent = len(tc.Arguments)
		cs.send(w, cs.head.Chunk(openaiwire.Delta{ToolCalls: []openaiwire.DeltaToolCall{{Index: cc.index, Function: openaiwire.DeltaFunction{Arguments: frag}}}}, nil))
	}
}

func (g *Gateway) streamCompletion(w http.ResponseWriter, r *http.Request, a *agent.Agent, model string, rr *openaiwire.RunRequest) {
	ctx, cancel := g.runContext(r)
	defer cancel()
	cs := &completionStream{openaiStream: openaiStream{cancel: cancel}, head: openaiwire.ChunkHead{ID: openaiwire.NewCompletionID(),
		Created: g.o.Now().Unix(), Model: model, IncludeUsage: rr.IncludeUsage}, noToolCalls: rr.ToolCallsOff(), logprobs: rr.Logprobs}
	cs.tokens = openaiwire.NewChunkEncoder(cs.head)
	rw := g.newStream(w, r, a, cs, cancel, func(s *sse.Stream) { _ = s.QueueData(cs.tokens.Role()) })
	defer rw.Close()
	defer rw.Recover()

	res, err := g.runStateless(ctx, r, rr.Req, rw.Event)
	if err != nil {
		if !rw.Opened() {
			g.failRun(w, r, err)
			return
		}
		// Not expected (RunStateless reports late failures as events).
		g.logger(r).ErrorContext(r.Context(), "stateless run failed after events", "err", err)
		g.failStream(r, rw, &cs.openaiStream, err, "The response failed.")
		rw.Finish()
		return
	}
	if res.Error != "" {
		g.failStream(r, rw, &cs.openaiStream, res.Err, res.Error)
	} else {
		// The finish chunk, the usage chunk and [DONE] follow one another
		// at once: one write.
		_, finish := g.clientCalls(r, rr, res)
		rw.Queue(cs.tokens.Finish(finish))
		if cs.head.IncludeUsage {
			rw.Queue(cs.tokens.UsageChunk(rr.UsageOfRun(res)))
		}
	}
	rw.Finish()
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
func (g *Gateway) completeOnce(w http.ResponseWriter, r *http.Request, model string, rr *openaiwire.RunRequest) {
	ctx, cancel := g.runContext(r)
	defer cancel()
	defer g.recoverSync(w, r)
	var act openaiwire.Activity
	var reasoning []byte
	var lp *openaiwire.LogprobsBody
	if rr.Logprobs {
		lp = &openaiwire.LogprobsBody{Content: []llm.TokenLogProb{}}
	}
	res := g.runToEnd(ctx, w, r, rr.Req, func(ev agent.Event) {
		reasoning = append(reasoning, act.Text(ev)...)
		if lp != nil && ev.Type == agent.EventContent {
			lp.Content = append(lp.Content, ev.LogProbs...)
		}
	})
	if res == nil {
		return
	}
	calls, finish := g.clientCalls(r, rr, res)
	writeJSON(w, openaiwire.Completion{
		ID: openaiwire.NewCompletionID(), Object: "chat.completion", Created: g.o.Now().Unix(), Model: model,
		Choices: []openaiwire.CompletionChoice{{Message: openaiwire.AnswerOf(res.Content, string(reasoning), calls), Logprobs: lp, FinishReason: finish}},
		Usage:   rr.UsageOfRun(res),
	})
}

// clientCalls are the client tool calls a successful run answers and its
// finish reason (RunRequest.ClientCalls), logging the calls dropped for
// tool_choice none.
func (g *Gateway) clientCalls(r *http.Request, rr *openaiwire.RunRequest, res *agent.StatelessResult) ([]openai.ToolCall, string) {
	calls, finish, dropped := rr.ClientCalls(res)
	if dropped {
		g.logger(r).WarnContext(r.Context(), "model called client tools despite tool_choice none; calls dropped",
			"calls", len(res.ClientToolCalls))
	}
	return calls, finish
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
