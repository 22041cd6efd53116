package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"agentchat/internal/approval"
	"agentchat/internal/budget"
	"agentchat/internal/llm"
	"agentchat/internal/pricing"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// outcome is how the step loop ended.
type outcome int

const (
	// outFinal: the model gave an answer without tool calls.
	outFinal outcome = iota
	// outClientTools: the model called tools the client runs (stateless).
	outClientTools
	// outMaxSteps: MaxSteps LLM calls ran without a final answer.
	outMaxSteps
	// outFailed: an LLM call or a persistence step failed.
	outFailed
	// outStopped: the run's context ended (abort, deadline, client left).
	outStopped
	// outPaused: tool calls wait for a person's decision (approval).
	outPaused
)

// StepSeparator goes between the texts of two steps of one run when they
// are shown as one text (an OpenAI message): without it "Let me check." and
// "Dune is available." would be glued into one sentence.
const StepSeparator = "\n\n"

// errToolTimeout is the cancel cause of a tool whose ToolTimeout expired.
var errToolTimeout = errors.New("tool timeout")

// maxStepsText is the error of a run that reached MaxSteps.
func maxStepsText(n int) string {
	return fmt.Sprintf("The agent stopped after reaching the maximum of %d steps without a final answer.", n)
}

// toolResult is the output of one tool call.
type toolResult struct {
	call   openai.ToolCall
	output string
	failed bool
	// changed: a tool with SideEffects was run (whatever its outcome).
	changed bool
	// labChange: a tool that changes the lab was run or declined (it is
	// audited); declined: the person declined it (it did not run).
	labChange, declined bool
	// decision and decidedBy are the approval decision (store.Decision*)
	// and who made it; empty when none was asked.
	decision, decidedBy string
}

// recorder stores the messages of a run as the loop produces them, from
// the loop's goroutine: the project chat's turn stores them in its session
// (turnRun), the stateless gateway stores nothing (noRecorder). An error
// ends the run (outFailed). What else a run must persist as it goes (such
// as tool calls waiting for a person's decision) belongs here too.
type recorder interface {
	// assistant stores the assistant message id of one step; interrupted:
	// the stream failed after res.Content was shown.
	assistant(id string, res *llm.Result, interrupted bool) error
	// tools stores the tool messages of one step.
	tools(results []toolResult) error
	// readingStep stores the assistant message id of a step whose tool
	// calls only read (readsOnly); it may do so beside the run of those
	// tools, since a crash then loses no change.
	readingStep(id string, res *llm.Result) error
	// beforeChange is called before tools that change the lab run (a
	// GNS3 snapshot, once per turn, where it applies).
	beforeChange(ctx context.Context)
	// pause stores the calls that wait for a person's decision and ends
	// the run (approval; only called when the loop may pause).
	pause(calls []openai.ToolCall) error
}

// noRecorder stores nothing (the stateless gateway).
type noRecorder struct{}

func (noRecorder) assistant(string, *llm.Result, bool) error { return nil }
func (noRecorder) tools([]toolResult) error                  { return nil }
func (noRecorder) readingStep(string, *llm.Result) error     { return nil }
func (noRecorder) beforeChange(context.Context)              {}
func (noRecorder) pause([]openai.ToolCall) error {
	return errors.New("no person can be asked for an approval here")
}

// runResult is how a run of the loop ended, and what it used.
type runResult struct {
	out outcome
	// last is the last LLM result (nil when no call answered).
	last *llm.Result
	// err is the failure of outFailed and the cause of outStopped.
	err error
	// content is the text of every answered step, StepSeparator between.
	content string
	tally
}

// tally is what a run used.
type tally struct {
	llmCalls int64
	usage    llm.Usage
	// costNanos is what the priced calls cost, in nano-dollars; unpriced
	// counts the calls of a model without prices (their cost is unknown,
	// not zero).
	costNanos int64
	unpriced  int64
	// toolCalls counts the tool calls by tool name (nil: none).
	toolCalls   map[string]int64
	sideEffects bool
}

// addCall counts one LLM call, its usage and its cost at prices p.
func (t *tally) addCall(u llm.Usage, p pricing.Prices) {
	t.llmCalls++
	t.usage.PromptTokens += u.PromptTokens
	t.usage.CompletionTokens += u.CompletionTokens
	t.usage.TotalTokens += u.TotalTokens
	t.usage.CachedTokens += u.CachedTokens
	if c, ok := p.Cost(int64(u.PromptTokens), int64(u.CachedTokens), int64(u.CompletionTokens)); ok {
		t.costNanos += c
	} else {
		t.unpriced++
	}
}

// loop is one run of the agent loop: LLM calls, tool runs and accounting.
// Persistence is done by its recorder, so the same loop serves the stored
// project chat and the stateless gateway.
type loop struct {
	rt     *Runtime
	client llm.Client
	// prices are the model's, for the cost of each call; budget is the
	// tightest budget of the run (the zero Limit: none).
	prices pricing.Prices
	budget budget.Limit
	req    llm.Request
	tools  map[string]Tool
	// clientTools are tool names the client declared and runs itself.
	clientTools map[string]bool
	// noToolCalls is tool choice "none": a tool call the model returns
	// anyway is dropped (no event, nothing run) and its step is the final
	// answer.
	noToolCalls bool
	em          *emitter
	// prep is the agent as prepared for the run: it refuses tools not
	// offered and rebuilds the system prompt after a step that changed
	// something; system is the prompt as last sent.
	prep   setup
	system string
	// window fits each call into the model's context window (nil: all
	// messages are sent).
	window *window

	// rec stores what the run produces (noRecorder: nothing).
	rec recorder
	// policy is the run's approval policy; canPause says whether calls
	// that need approval pause the run (the project chat) or are refused
	// (the stateless gateway, where no person can be asked).
	policy   approval.Policy
	canPause bool

	// content is the text of every answered step (runResult.content).
	content strings.Builder

	mu   sync.Mutex // guards used (tools run concurrently)
	used tally
}

func newLoop(rt *Runtime, client llm.Client, su setup, em *emitter, rec recorder) *loop {
	l := &loop{
		rt: rt, client: client, em: em, rec: rec,
		tools: make(map[string]Tool, len(su.tools)),
		prep:  su, system: su.system,
	}
	for _, t := range su.tools {
		l.tools[t.Name] = t
	}
	l.req.Tools = llmTools(su.tools)
	return l
}

// refreshBeside starts the refresh of the system prompt due after a step
// whose tools changed something (one per such step, none when nothing
// changed), so that it runs beside the storing of the step's tool
// messages; the func it returns waits for it and gives the next LLM call
// the prompt as it is now. A failed refresh keeps the previous prompt; a
// refresh that panics panics again in the waiting goroutine (the turn's),
// as it did when it ran there, its own stack logged first.
func (l *loop) refreshBeside(ctx context.Context, results []toolResult) (apply func()) {
	if !l.prep.refreshes() || !slices.ContainsFunc(results, func(r toolResult) bool { return r.changed }) {
		return func() {}
	}
	var (
		system   string
		err      error
		panicked any
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() {
			if panicked = recover(); panicked != nil {
				l.rt.log.ErrorContext(ctx, "refresh of the system prompt panicked", "panic", panicked, "stack", string(debug.Stack()))
			}
		}()
		system, err = l.prep.refresh(ctx)
	}()
	return func() {
		<-done
		if panicked != nil {
			panic(panicked)
		}
		msgs := l.req.Messages
		if len(msgs) == 0 || msgs[0].Role != openai.ChatMessageRoleSystem || msgs[0].Content != l.system {
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				l.rt.log.WarnContext(ctx, "refresh the system prompt", "err", err)
			}
			return
		}
		msgs[0].Content, l.system = system, system
	}
}

// readsOnly reports whether none of calls can change anything: each names
// an agent tool without side effects, or none (it is refused, not run).
func (l *loop) readsOnly(calls []openai.ToolCall) bool {
	for _, c := range calls {
		if t, ok := l.tools[c.Function.Name]; ok && t.SideEffects {
			return false
		}
	}
	return true
}

// countCall adds one LLM call and its usage to the totals.
func (l *loop) countCall(u llm.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used.addCall(u, l.prices)
}

// isClientTool reports whether name is a client-declared tool (agent tools
// win a name clash).
func (l *loop) isClientTool(name string) bool {
	if _, ok := l.tools[name]; ok {
		return false
	}
	return l.clientTools[name]
}

// run executes steps until a final answer, client tool calls, MaxSteps, a
// failure or the end of ctx, and returns how it ended and what it used.
func (l *loop) run(ctx context.Context) runResult {
	out, last, err := l.steps(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return runResult{out: out, last: last, err: err, content: l.content.String(), tally: l.used}
}

// steps is run: it returns the last LLM result and, for outFailed and
// outStopped, the error.
func (l *loop) steps(ctx context.Context) (outcome, *llm.Result, error) {
	for range l.rt.o.MaxSteps {
		msgID := l.rt.o.NewID()
		req := l.req
		if l.window != nil {
			msgs, err := l.window.fit(l.req.Messages, l.req.Tools)
			if err != nil {
				return outFailed, nil, &userError{msg: err.Error(), err: err}
			}
			req.Messages = msgs
		}
		res, err := l.client.Stream(ctx, req, func(d llm.Delta) error {
			l.onDelta(msgID, d)
			return nil
		})
		if res != nil && (err == nil || res.Content != "" || res.Reasoning != "" || len(res.ToolCalls) > 0 || res.Usage.TotalTokens > 0) {
			// A call counts once it produced something (tokens were used).
			l.countCall(res.Usage)
		}
		if err != nil {
			if res != nil && (res.Content != "" || res.Reasoning != "") {
				if serr := l.rec.assistant(msgID, res, true); serr != nil {
					if errors.Is(serr, store.ErrNotFound) {
						l.rt.log.InfoContext(ctx, "interrupted assistant message not saved: session deleted")
					} else {
						l.rt.log.ErrorContext(ctx, "save interrupted assistant message", "err", serr)
					}
				}
			}
			if ctx.Err() != nil {
				return outStopped, res, context.Cause(ctx)
			}
			return outFailed, res, fmt.Errorf("llm call: %w", err)
		}
		if res.Content != "" {
			if l.content.Len() > 0 {
				// The text of successive steps is separate paragraphs.
				l.content.WriteString(StepSeparator)
			}
			l.content.WriteString(res.Content)
		}
		if l.noToolCalls && len(res.ToolCalls) > 0 {
			l.dropToolCalls(ctx, res)
		}
		if len(res.ToolCalls) == 0 {
			if err := l.rec.assistant(msgID, res, false); err != nil {
				return outFailed, res, err
			}
			return outFinal, res, nil
		}
		if l.overBudget() {
			// The call is paid for; its tool calls are not run.
			if res.Content != "" || res.Reasoning != "" {
				if serr := l.rec.assistant(msgID, res, true); serr != nil {
					l.rt.log.ErrorContext(ctx, "save the assistant message of a turn over budget", "err", serr)
				}
			}
			return outFailed, res, l.budgetStop()
		}

		normalizeCalls(res.ToolCalls, l.rt.o.NewID)
		hasClient := false
		for i, c := range res.ToolCalls {
			client := l.isClientTool(c.Function.Name)
			hasClient = hasClient || client
			l.em.emit(Event{Type: EventToolCall, MessageID: msgID, ToolCall: &ToolCallEvent{
				ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments,
				Complete: true, Index: i, Client: client,
			}})
		}
		if hasClient {
			// The client runs its tools; agent tools of the same step are not
			// run (their results could not reach the client's history).
			return outClientTools, res, nil
		}
		// A step that changes something is stored before its tools run, so
		// that a crash leaves the calls to answer as interrupted; one that
		// only reads runs its tools while it is stored.
		save := l.rec.assistant
		if l.readsOnly(res.ToolCalls) {
			save = func(id string, res *llm.Result, _ bool) error { return l.rec.readingStep(id, res) }
		}
		if err := save(msgID, res, false); err != nil {
			return outFailed, res, err
		}
		results, wait := l.runStep(ctx, res.ToolCalls)
		// The lab is read again (when the step changed it) while the
		// step's tool messages are stored; a paused step needs no read.
		refreshed := func() {}
		if len(wait) == 0 {
			refreshed = l.refreshBeside(ctx, results)
		}
		if err := l.rec.tools(results); err != nil {
			return outFailed, res, err
		}
		if len(wait) > 0 {
			if err := l.rec.pause(wait); err != nil {
				return outFailed, res, err
			}
			return outPaused, res, nil
		}
		if ctx.Err() != nil {
			return outStopped, res, context.Cause(ctx)
		}
		l.req.Messages = append(l.req.Messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant, Content: res.Content, ToolCalls: res.ToolCalls,
		})
		for _, r := range results {
			l.req.Messages = append(l.req.Messages, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, Content: r.output, ToolCallID: r.call.ID,
			})
		}
		refreshed()
	}
	return outMaxSteps, nil, nil
}

// dropToolCalls removes the tool calls of res, which the model made
// despite tool choice "none": none of them is run or passed to the client,
// the step's text stays, and the step ends the run as a final answer.
func (l *loop) dropToolCalls(ctx context.Context, res *llm.Result) {
	names := make([]string, len(res.ToolCalls))
	for i, c := range res.ToolCalls {
		names[i] = c.Function.Name
	}
	l.rt.log.WarnContext(ctx, "model called tools despite tool_choice none; calls dropped",
		"calls", len(res.ToolCalls), "tools", strings.Join(names, ","), "finish_reason", res.FinishReason)
	res.ToolCalls = nil
	if res.FinishReason != string(openai.FinishReasonLength) {
		res.FinishReason = string(openai.FinishReasonStop)
	}
}

// onDelta turns one streamed increment into events. The last event of an
// increment has its More; an increment that yields no event (a tool call
// under tool_choice "none") could break the promise of the event before,
// so no event has More then.
func (l *loop) onDelta(msgID string, d llm.Delta) {
	more := d.More && !l.noToolCalls
	switch {
	case d.ToolCall != nil && l.noToolCalls:
		// Dropped at the end of the step (dropToolCalls).
	case d.ToolCall != nil:
		tc := d.ToolCall
		ev := ToolCallEvent{ID: tc.ID, Name: tc.Name, Index: tc.Index, Client: l.isClientTool(tc.Name)}
		if tc.First {
			first := ev
			l.em.emit(Event{Type: EventToolCall, MessageID: msgID, ToolCall: &first, More: more || tc.Arguments != ""})
			if tc.Arguments == "" {
				return
			}
		}
		ev.Arguments = tc.Arguments
		l.em.emit(Event{Type: EventToolCall, MessageID: msgID, ToolCall: &ev, More: more})
	case d.Content != "" || len(d.LogProbs) > 0:
		l.em.emit(Event{Type: EventContent, Content: d.Content, LogProbs: d.LogProbs, MessageID: msgID, More: more})
	case d.Reasoning != "":
		l.em.emit(Event{Type: EventReasoning, Content: d.Reasoning, MessageID: msgID, More: more})
	}
}

// normalizeCalls gives every call an id and the function type, and drops
// the streaming index (not part of a request message).
func normalizeCalls(calls []openai.ToolCall, newID func() string) {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call_" + newID()
		}
		calls[i].Type = openai.ToolTypeFunction
		calls[i].Index = nil
	}
}
