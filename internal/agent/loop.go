package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"agentchat/internal/llm"
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
}

// loop is one run of the agent loop: LLM calls, tool runs and accounting.
// Persistence is done by the optional hooks, so the same loop serves the
// stored project chat and the stateless gateway.
type loop struct {
	rt     *Runtime
	client llm.Client
	req    llm.Request
	tools  map[string]Tool
	// clientTools are tool names the client declared and runs itself.
	clientTools map[string]bool
	// noToolCalls is tool choice "none": a tool call the model returns
	// anyway is dropped (no event, nothing run) and its step is the final
	// answer.
	noToolCalls bool
	em          *emitter
	// refuse answers calls of tools not offered (nil: "unknown tool").
	refuse func(name string) string
	// refresh rebuilds the system prompt after a step that changed
	// something (nil: the prompt never changes); system is the prompt as
	// last sent.
	refresh func(ctx context.Context) (string, error)
	system  string
	// window fits each call into the model's context window (nil: all
	// messages are sent).
	window *window

	// saveAssistant persists an assistant message (interrupted: the stream
	// failed after res.Content was shown); nil when nothing is stored.
	saveAssistant func(id string, res *llm.Result, interrupted bool) error
	// saveTools persists the tool messages of one step; nil when nothing is stored.
	saveTools func(results []toolResult) error

	// content is the text of every answered step (stateless result).
	content strings.Builder

	mu          sync.Mutex // guards the fields below (tools run concurrently)
	llmCalls    int64
	usage       llm.Usage
	toolCalls   map[string]int64
	sideEffects bool
}

func newLoop(rt *Runtime, client llm.Client, su setup, em *emitter) *loop {
	l := &loop{
		rt: rt, client: client, em: em,
		tools:     make(map[string]Tool, len(su.tools)),
		toolCalls: map[string]int64{},
		refuse:    su.refuse, refresh: su.refresh, system: su.system,
	}
	for _, t := range su.tools {
		l.tools[t.Name] = t
	}
	l.req.Tools = llmTools(su.tools)
	return l
}

// refreshSystem gives the next LLM call the system prompt as it is now,
// after a step whose tools changed something; one refresh per such step,
// none when nothing changed. A failed refresh keeps the previous prompt.
func (l *loop) refreshSystem(ctx context.Context, results []toolResult) {
	if l.refresh == nil || !slices.ContainsFunc(results, func(r toolResult) bool { return r.changed }) {
		return
	}
	msgs := l.req.Messages
	if len(msgs) == 0 || msgs[0].Role != openai.ChatMessageRoleSystem || msgs[0].Content != l.system {
		return
	}
	system, err := l.refresh(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.rt.log.WarnContext(ctx, "refresh the system prompt", "err", err)
		}
		return
	}
	msgs[0].Content, l.system = system, system
}

// countCall adds one LLM call and its usage to the totals.
func (l *loop) countCall(u llm.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.llmCalls++
	l.usage.PromptTokens += u.PromptTokens
	l.usage.CompletionTokens += u.CompletionTokens
	l.usage.TotalTokens += u.TotalTokens
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
// failure or the end of ctx. It returns the last LLM result and, for
// outFailed and outStopped, the error.
func (l *loop) run(ctx context.Context) (outcome, *llm.Result, error) {
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
			if res != nil && l.saveAssistant != nil && (res.Content != "" || res.Reasoning != "") {
				if serr := l.saveAssistant(msgID, res, true); serr != nil {
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
			if l.saveAssistant != nil {
				if err := l.saveAssistant(msgID, res, false); err != nil {
					return outFailed, res, err
				}
			}
			return outFinal, res, nil
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
		if l.saveAssistant != nil {
			if err := l.saveAssistant(msgID, res, false); err != nil {
				return outFailed, res, err
			}
		}
		results := l.runTools(ctx, res.ToolCalls)
		if l.saveTools != nil {
			if err := l.saveTools(results); err != nil {
				return outFailed, res, err
			}
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
		l.refreshSystem(ctx, results)
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

// runTools runs the calls, concurrently when there are several, and returns
// their results in call order. A panic outside a tool's own run (an event
// callback, a Refuse hook) is raised again on the caller's goroutine once
// every call is over, where the run and its handler recover it: on a
// goroutine of its own it would kill the process.
func (l *loop) runTools(ctx context.Context, calls []openai.ToolCall) []toolResult {
	results := make([]toolResult, len(calls))
	if len(calls) == 1 {
		results[0] = l.runTool(ctx, calls[0])
		return results
	}
	var wg sync.WaitGroup
	panics := make([]any, len(calls))
	for i, c := range calls {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					l.rt.log.ErrorContext(ctx, "tool call panicked", "tool", c.Function.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					panics[i] = p
				}
			}()
			results[i] = l.runTool(ctx, c)
		})
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	return results
}

// runTool runs one call between its tool_start and tool_end events. Every
// failure (unknown tool, invalid arguments, error, panic, timeout, turn
// stopped) becomes an output text for the model.
func (l *loop) runTool(ctx context.Context, call openai.ToolCall) toolResult {
	name := call.Function.Name
	l.mu.Lock()
	l.toolCalls[name]++
	l.mu.Unlock()
	l.em.emit(Event{Type: EventToolStart, ToolName: name, ToolCallID: call.ID})
	out, failed, changed := l.execTool(ctx, call)
	out = capToolOutput(out, l.rt.o.ToolMaxOutputBytes)
	l.em.emit(Event{Type: EventToolEnd, ToolName: name, ToolCallID: call.ID, ToolOutput: out})
	return toolResult{call: call, output: out, failed: failed, changed: changed}
}

type toolReturn struct {
	out string
	err error
}

// execTool runs one call and returns its output, whether it failed, and
// whether a tool with side effects was run.
func (l *loop) execTool(ctx context.Context, call openai.ToolCall) (out string, failed, changed bool) {
	name := call.Function.Name
	tool, ok := l.tools[name]
	if !ok {
		if l.refuse != nil {
			if msg := l.refuse(name); msg != "" {
				return msg, true, false
			}
		}
		return fmt.Sprintf("Error: unknown tool %q. Available tools: %s.", name, l.toolNames()), true, false
	}
	args := strings.TrimSpace(call.Function.Arguments)
	if args == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		return fmt.Sprintf("Error: the arguments of tool %s are not a valid JSON object (%v). Call it again with a JSON object that matches its schema.", name, err), true, false
	}
	if ctx.Err() != nil {
		return fmt.Sprintf("Error: tool %s was not run because the turn was stopped.", name), true, false
	}
	if tool.SideEffects {
		l.mu.Lock()
		l.sideEffects = true
		l.mu.Unlock()
	}
	out, failed = l.runBounded(ctx, tool, args)
	return out, failed, tool.SideEffects
}

// runBounded runs tool within its timeout (Tool.Timeout, else the
// runtime's ToolTimeout), recovering a panic.
func (l *loop) runBounded(ctx context.Context, tool Tool, args string) (string, bool) {
	name := tool.Name
	timeout := l.rt.o.ToolTimeout
	if tool.Timeout > 0 {
		timeout = tool.Timeout
	}
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errToolTimeout)
	defer cancel()
	done := make(chan toolReturn, 1) // buffered: a tool that ignores ctx may finish after we stopped waiting
	go func() {
		defer func() {
			if p := recover(); p != nil {
				l.rt.log.ErrorContext(ctx, "tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
				done <- toolReturn{err: fmt.Errorf("the tool crashed: %v", p)}
			}
		}()
		out, err := tool.Execute(tctx, json.RawMessage(args))
		done <- toolReturn{out: out, err: err}
	}()

	var r toolReturn
	select {
	case r = <-done:
	case <-tctx.Done():
		select {
		case r = <-done:
		default:
			r.err = tctx.Err()
		}
	}
	switch {
	case r.err == nil:
		return r.out, false
	case tctx.Err() != nil && context.Cause(tctx) == errToolTimeout:
		return fmt.Sprintf("Error: tool %s timed out after %s.", name, timeout), true
	case ctx.Err() != nil:
		return fmt.Sprintf("Error: tool %s was interrupted because the turn was stopped.", name), true
	}
	l.rt.log.InfoContext(ctx, "tool failed", "tool", name, "err", r.err)
	return fmt.Sprintf("Error: tool %s failed: %v", name, r.err), true
}

func (l *loop) toolNames() string {
	if len(l.tools) == 0 {
		return "none"
	}
	names := make([]string, 0, len(l.tools))
	for n := range l.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
