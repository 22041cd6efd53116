package agent

import (
	"context"
	"sync/atomic"
	"testing"

	"agentchat/internal/llm/llmtest"
)

// TestParallelToolPanicReachesTheRun: a panic on the goroutine of one of
// several parallel tool calls, outside the tool's own run (the caller's
// event callback, the agent's Refuse hook), is raised again on the run's
// goroutine, where it can be recovered (on its own goroutine it would kill
// the process): a turn ends with an error then done and frees its session,
// and RunStateless panics on the caller's goroutine, for its handler to
// recover.
func TestParallelToolPanicReachesTheRun(t *testing.T) {
	parallel := llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`},
		{ID: "call_2", Name: "add", Arguments: `{"a":3,"b":4}`},
	}}
	invented := llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "call_1", Name: "erase_all", Arguments: `{}`},
		{ID: "call_2", Name: "erase_more", Arguments: `{}`},
	}}
	tests := []struct {
		name  string
		reply llmtest.Reply
		// emitPanics: the event callback panics at the first tool_start;
		// otherwise the agent's Refuse hook panics.
		emitPanics bool
	}{
		{"event callback at tool_start", parallel, true},
		{"refuse hook", invented, false},
	}
	for _, tt := range tests {
		for _, stateless := range []bool{false, true} {
			name := tt.name + ", turn"
			if stateless {
				name = tt.name + ", stateless"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, []Tool{addTool(false)})
				tester, _ := h.rt.o.Agents.Get("tester")
				if !tt.emitPanics {
					skills := tester.Skills
					tester.Prepare = func(context.Context, TurnInfo) (Preparation, error) {
						return Preparation{Skills: skills, Refuse: func(string) string { panic("refuse hook bug") }}, nil
					}
				}
				h.llm.Enqueue(tt.reply)
				var fired atomic.Bool
				onEvent := func(e Event) {
					if tt.emitPanics && e.Type == EventToolStart && !fired.Swap(true) {
						panic("event callback bug")
					}
				}
				if stateless {
					var ev events
					recovered := func() (p any) {
						defer func() { p = recover() }()
						_, _ = h.rt.RunStateless(context.Background(), StatelessRequest{AgentID: "tester", Messages: userMsgs("add")},
							func(e Event) { ev.add(e); onEvent(e) })
						return nil
					}()
					if recovered == nil {
						t.Fatalf("no panic reached the caller: %s", ev)
					}
					return
				}
				k := newKey()
				ev := h.turnCtx(context.Background(), k, "add", onEvent)
				checkEnd(t, ev, true)
				// The session is free: the next turn runs.
				checkEnd(t, h.turn(k, "again"), false)
			})
		}
	}
}
