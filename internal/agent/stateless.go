package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"agentchat/internal/approval"
	"agentchat/internal/llm"
	"agentchat/internal/store"
	"agentchat/internal/telemetry"

	openai "github.com/sashabaranov/go-openai"
)

// StatelessRequest is one request of the stateless gateway (/v1): the
// client sends the whole conversation and nothing is stored.
type StatelessRequest struct {
	// AgentID selects the agent (the registry's fallback when unknown).
	AgentID string
	// Messages is the client's history (system, user, assistant, tool),
	// content already flattened to strings.
	Messages []openai.ChatCompletionMessage
	// ClientTools are tools the client declares and runs itself; they are
	// offered to the model beside the agent's tools (an agent tool wins a
	// name clash).
	ClientTools []openai.Tool
	// ToolChoice is the client's tool_choice: nil, "" or "auto" (the model
	// decides); "none" (no tool call on any LLM call of the run, the tools
	// still declared so that a history with tool calls stays valid);
	// "required" or an openai.ToolChoice (or a pointer to one) naming a
	// client or agent tool, forced on the first LLM call only, so that the
	// agent can answer once the tools it was made to call have run. A
	// choice the run cannot honour is a *ToolChoiceError.
	ToolChoice  any
	Temperature *float32
	// MaxTokens bounds each LLM call (0: the configuration's bound, if
	// any; a configured bound also caps a larger value).
	MaxTokens int
	Stop      []string
	// Options are the client's other settings (top_p, seed,
	// response_format, logprobs...), sent on every LLM call of the run
	// (response_format thus shapes the final answer; OpenAI applies it to
	// content, never to tool calls).
	Options llm.Options
	// UserID selects the LLM configuration.
	UserID string
	// Mode is the agent mode asked for (copilot_mode), or empty for the
	// agent's default; it must be one of the agent's Modes.
	Mode string
	// SlotPool and MaxTurns, both set, make the run take one of the
	// MaxTurns turn slots of SlotPool (an API key's own max_parallel:
	// KeySlotPool) instead of one of the user's MaxTurnsPerUser.
	SlotPool string
	MaxTurns int
	// KeyID is the API key the caller presented (empty: none): the usage
	// ledger counts the run's LLM calls under it; KeyBudget is that key's
	// budget.
	KeyID     string
	KeyBudget store.Budget
}

// StatelessResult is the outcome of a stateless run.
type StatelessResult struct {
	// AgentID is the agent that ran.
	AgentID string
	// Content is the text of every step of the run, the steps separated by
	// StepSeparator (what a streaming client of the gateway displayed).
	Content string
	// ClientToolCalls are the calls of client tools the model made, in
	// order (FinishReason "tool_calls"); the client runs them.
	ClientToolCalls []openai.ToolCall
	// FinishReason is "stop", "length" or "tool_calls".
	FinishReason string
	// Usage sums every LLM call of the run.
	Usage llm.Usage
	// CostNanos is what the priced calls cost, in nano-dollars;
	// UnpricedCalls counts the calls of a model without prices (the cost
	// is then unknown).
	CostNanos     int64
	UnpricedCalls int64
	// SideEffects is true once an agent tool with SideEffects ran: the
	// request must not be retried.
	SideEffects bool
	// Model is the model the provider reported for the last call.
	Model string
	// Error is the text of the EventError emitted when the run failed
	// after events were already emitted; empty on success.
	Error string
	// Err is the underlying error of Error (an *llm.Error, a deadline, ...),
	// for callers that answer a status; nil on success.
	Err error
}

// RunStateless runs the agent over the client's messages: the agent's
// system prompt is put before them (the client's own system messages are
// kept), agent tools run server-side (with their events), and a call of a
// client tool ends the run with FinishReason "tool_calls".
//
// The run holds one of the user's turn slots (MaxTurnsPerUser), or of
// req.SlotPool, until it ends. A failure before any event was emitted (no LLM configured, the
// user's turn slots all taken: a *store.TurnSlotsFullError, the provider
// refusing the first call, ...) is returned as an error and nothing is
// emitted, so that the caller can answer with a status. Otherwise emit
// receives the events in order, from one goroutine at a time, ending with
// EventDone (after an EventError when the run failed), and the result is
// returned with a nil error.
func (r *Runtime) RunStateless(ctx context.Context, req StatelessRequest, emit func(Event)) (*StatelessResult, error) {
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("%w: messages are empty", ErrInvalidRequest)
	}
	if req.MaxTokens < 0 {
		return nil, fmt.Errorf("%w: max tokens is negative", ErrInvalidRequest)
	}
	choice, err := parseToolChoice(req.ToolChoice)
	if err != nil {
		return nil, err
	}
	// No session lease here: the run holds one of the user's turn slots,
	// taken while the LLM is resolved (one round trip for both).
	pool, n := r.slotsOf(req.UserID, req.SlotPool, req.MaxTurns)
	waitSlot := r.startTurnSlot(ctx, pool, r.o.NewID(), n)
	waitBudget := r.startBudget(ctx, req.UserID, req.KeyID, req.KeyBudget)
	a, conf, err := r.resolve(ctx, req.AgentID, req.UserID)
	slot, serr := waitSlot()
	defer slot.release(ctx)
	limit, berr := waitBudget()
	if err := cmp.Or(err, serr, berr); err != nil {
		return nil, err
	}
	client := conf.Client
	ctx, cancel := context.WithTimeoutCause(ctx, r.o.TurnTimeout, errTurnTimeout)
	defer cancel()
	if req.Mode != "" && len(a.Modes) > 0 && !a.HasMode(req.Mode) {
		return nil, fmt.Errorf("%w: agent %s has no mode %q", ErrInvalidRequest, a.ID, req.Mode)
	}
	su, err := r.prepare(ctx, a, TurnInfo{UserID: req.UserID, Mode: a.resolveMode(req.Mode, nil, conf.CopilotMode)})
	if err != nil {
		return nil, err
	}

	// The run's span: its LLM and tool calls hang under it.
	ctx, emit, endSpan := r.traceTurn(ctx, a.ID, "", emit)
	defer endSpan()
	em := &emitter{fn: emit}
	var rec recorder = noRecorder{}
	if r.o.Store != nil && req.UserID != "" {
		// Nothing is stored but the audit of lab changes.
		rec = auditRecorder{rt: r, userID: req.UserID, runID: r.o.NewID()}
	}
	l := newLoop(r, client, su, em, rec)
	l.prices, l.budget = conf.Prices, limit
	// No person can be asked here: with an approval policy, the calls that
	// need approval are refused with a message for the model.
	l.policy = approval.FromValue(conf.Approval)
	l.clientTools = map[string]bool{}
	for _, t := range req.ClientTools {
		if t.Function == nil || t.Function.Name == "" {
			continue
		}
		if _, clash := l.tools[t.Function.Name]; clash {
			continue
		}
		l.clientTools[t.Function.Name] = true
		l.req.Tools = append(l.req.Tools, t)
	}
	if err := choice.check(l, a.ID); err != nil {
		return nil, err
	}
	if choice.forced() {
		// The loop streams every step with l.req: the forced choice goes
		// with the first call only.
		l.client = &firstCallChoice{Client: client, choice: choice.value()}
	} else {
		l.req.ToolChoice = choice.value()
		// A provider may call a tool despite "none": the loop drops it.
		l.noToolCalls = choice.mode == "none"
	}
	l.req.Messages = statelessMessages(su.system, req.Messages)
	l.req.Temperature = req.Temperature
	if l.req.Temperature == nil {
		l.req.Temperature = conf.Temperature
	}
	l.req.MaxTokens = req.MaxTokens
	if l.req.MaxTokens == 0 || (conf.MaxTokens > 0 && conf.MaxTokens < l.req.MaxTokens) {
		// The configuration's bound holds; a client may ask for less.
		l.req.MaxTokens = conf.MaxTokens
	}
	l.req.Stop = req.Stop
	l.req.Options = req.Options
	l.window = r.newWindow(conf, l.req.MaxTokens, l.req.Messages, lastUser(l.req.Messages))

	r.o.Metrics.TurnStarted()
	run := l.run(ctx)
	res, runErr := run.last, run.err
	result := &StatelessResult{
		AgentID: a.ID, Content: run.content, Usage: run.usage, SideEffects: run.sideEffects,
		Model: client.Model(), FinishReason: string(openai.FinishReasonStop),
	}
	if res != nil && res.Model != "" {
		result.Model = res.Model
	}
	switch run.out {
	case outFinal:
		if res.FinishReason == string(openai.FinishReasonLength) {
			result.FinishReason = res.FinishReason
		}
	case outClientTools:
		result.FinishReason = string(openai.FinishReasonToolCalls)
		for _, c := range res.ToolCalls {
			if l.isClientTool(c.Function.Name) {
				result.ClientToolCalls = append(result.ClientToolCalls, c)
			}
		}
	case outMaxSteps:
		runErr = &userError{msg: maxStepsText(r.o.MaxSteps)}
	case outStopped:
		if errors.Is(runErr, errTurnTimeout) {
			runErr = &userError{msg: fmt.Sprintf("The request took longer than the %s limit and was stopped.", r.o.TurnTimeout), err: context.DeadlineExceeded}
		}
	}
	r.o.Metrics.TurnEnded(statelessOutcome(run.out, runErr))
	result.CostNanos, result.UnpricedCalls = run.costNanos, run.unpriced
	ledgerCtx, cancelLedger := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	r.recordUsage(ledgerCtx, store.UsageKey{UserID: req.UserID, Model: client.Model(), KeyID: req.KeyID}, run.tally)
	cancelLedger()
	if runErr != nil {
		if !em.any() {
			return nil, runErr
		}
		result.Error, result.Err = humanError(runErr), runErr
		em.emit(Event{Type: EventError, Error: result.Error})
	}
	slot.release(ctx) // before the end the client sees
	em.emit(Event{Type: EventDone})
	return result, nil
}

// statelessOutcome is how a stateless run ended, for the turn metrics:
// aborted when its context ended but not by the time limit (the client
// went away), failed with an error, completed otherwise.
func statelessOutcome(out outcome, err error) string {
	switch {
	case out == outStopped && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errTurnTimeout):
		return telemetry.TurnAborted
	case err != nil:
		return telemetry.TurnFailed
	}
	return telemetry.TurnCompleted
}

// statelessMessages puts the agent's system prompt before the client's
// messages. A conversation made only of system messages (a title request
// of some clients) gets its last one as the user turn, which every
// provider accepts.
func statelessMessages(system string, client []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	msgs := make([]openai.ChatCompletionMessage, 0, len(client)+1)
	if system != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	}
	start := len(msgs)
	msgs = append(msgs, client...)
	last := -1
	for i := start; i < len(msgs); i++ {
		switch msgs[i].Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			last = i
		default:
			return msgs
		}
	}
	if last >= 0 {
		msgs[last].Role = openai.ChatMessageRoleUser
	}
	return msgs
}

// lastUser is the index of the last user message (the running turn starts
// there), 0 when there is none.
func lastUser(msgs []openai.ChatCompletionMessage) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return i
		}
	}
	return 0
}

// ToolChoiceError is a StatelessRequest.ToolChoice the run cannot honour:
// it names a function that is neither a client tool nor a tool of the
// agent, or it is "required" while no tool is offered. errors.Is(err,
// ErrInvalidRequest) holds.
type ToolChoiceError struct {
	// Function is the named function; empty for "required".
	Function string
	// AgentID is the agent of the run.
	AgentID string
}

// Error says what the choice names and why it cannot be honoured.
func (e *ToolChoiceError) Error() string {
	if e.Function == "" {
		return fmt.Sprintf("%s: tool choice \"required\" but neither the client nor agent %s offers a tool",
			ErrInvalidRequest, e.AgentID)
	}
	return fmt.Sprintf("%s: tool choice names function %q, which is neither a client tool nor a tool of agent %s",
		ErrInvalidRequest, e.Function, e.AgentID)
}

// Is makes a ToolChoiceError match ErrInvalidRequest.
func (e *ToolChoiceError) Is(target error) bool { return target == ErrInvalidRequest }

// toolChoice is a validated StatelessRequest.ToolChoice.
type toolChoice struct {
	// mode is "", "none", "auto" or "required"; empty with a function.
	mode string
	// function is the named function, if any.
	function string
}

// parseToolChoice checks the shape of a tool choice.
func parseToolChoice(v any) (toolChoice, error) {
	var named openai.ToolChoice
	switch c := v.(type) {
	case nil:
		return toolChoice{}, nil
	case string:
		switch c {
		case "", "none", "auto", "required":
			return toolChoice{mode: c}, nil
		}
		return toolChoice{}, fmt.Errorf("%w: tool choice %q is not none, auto or required", ErrInvalidRequest, c)
	case openai.ToolChoice:
		named = c
	case *openai.ToolChoice:
		if c == nil {
			return toolChoice{}, nil
		}
		named = *c
	default:
		return toolChoice{}, fmt.Errorf("%w: tool choice of type %T is not supported", ErrInvalidRequest, v)
	}
	if named.Type != "" && named.Type != openai.ToolTypeFunction {
		return toolChoice{}, fmt.Errorf("%w: tool choice type %q is not function", ErrInvalidRequest, named.Type)
	}
	if named.Function.Name == "" {
		return toolChoice{}, fmt.Errorf("%w: tool choice names no function", ErrInvalidRequest)
	}
	return toolChoice{function: named.Function.Name}, nil
}

// check verifies the choice against the tools the loop offers.
func (c toolChoice) check(l *loop, agentID string) error {
	switch {
	case c.function != "":
		if _, ok := l.tools[c.function]; !ok && !l.clientTools[c.function] {
			return &ToolChoiceError{Function: c.function, AgentID: agentID}
		}
	case c.mode == "required" && len(l.req.Tools) == 0:
		return &ToolChoiceError{AgentID: agentID}
	}
	return nil
}

// forced reports a choice that makes the model call a tool.
func (c toolChoice) forced() bool { return c.function != "" || c.mode == "required" }

// value is the choice as llm.Request.ToolChoice (nil: the default).
func (c toolChoice) value() any {
	switch {
	case c.function != "":
		return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: c.function}}
	case c.mode == "":
		return nil
	}
	return c.mode
}

// firstCallChoice sends a forced tool choice with the first LLM call of a
// run and none after it: once the tools it forced have run, the model must
// be free to answer (as an OpenAI client looping on tool calls does).
type firstCallChoice struct {
	llm.Client
	choice any
	used   bool
}

// take returns req with the choice on the first call only.
func (c *firstCallChoice) take(req llm.Request) llm.Request {
	if !c.used {
		c.used = true
		req.ToolChoice = c.choice
	}
	return req
}

// Stream runs a streamed call; see llm.Client.
func (c *firstCallChoice) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Result, error) {
	return c.Client.Stream(ctx, c.take(req), onDelta)
}

// Complete runs a non-streamed call; see llm.Client.
func (c *firstCallChoice) Complete(ctx context.Context, req llm.Request) (*llm.Result, error) {
	return c.Client.Complete(ctx, c.take(req))
}
