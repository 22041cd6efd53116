package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// The tool runs of a step: concurrent calls, each bounded by its timeout,
// every failure an output for the model.

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
	if l.used.toolCalls == nil {
		l.used.toolCalls = map[string]int64{}
	}
	l.used.toolCalls[name]++
	l.mu.Unlock()
	l.em.emit(Event{Type: EventToolStart, ToolName: name, ToolCallID: call.ID})
	ctx, endSpan := l.rt.startToolSpan(ctx, call)
	out, failed, changed := l.execTool(ctx, call)
	out = capToolOutput(out, l.rt.o.ToolMaxOutputBytes)
	endSpan(out, failed)
	l.em.emit(Event{Type: EventToolEnd, ToolName: name, ToolCallID: call.ID, ToolOutput: out})
	r := toolResult{call: call, output: out, failed: failed, changed: changed}
	if t, ok := l.tools[name]; ok && changed && t.Tier.ChangesLab() {
		// Run without asking; decide marks the calls a person approved.
		r.labChange, r.decision = true, store.DecisionNotRequired
	}
	return r
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
		if msg := l.prep.refusal(name); msg != "" {
			return msg, true, false
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
		l.used.sideEffects = true
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
