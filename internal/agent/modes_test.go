package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// modalAgent registers an agent with the modes "teach" (default) and
// "lab": "teach" offers the add tool, "lab" also the change tool (with
// side effects); tools outside the mode are refused, and each Refresh call
// is counted and gives a new prompt version.
func modalAgent(h *harness, refreshes *atomic.Int64, changeRuns *atomic.Int64) {
	change := Tool{
		Name: "change", SideEffects: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Run: func(context.Context, json.RawMessage) (string, error) {
			changeRuns.Add(1)
			return "changed", nil
		},
	}
	h.rt.o.Agents.Register(&Agent{
		ID: "modal", SystemPrompt: "Base.", Modes: []string{"teach", "lab"},
		Prepare: func(_ context.Context, info TurnInfo) (Preparation, error) {
			tools := []Tool{addTool(false)}
			if info.Mode == "lab" {
				tools = append(tools, change)
			}
			return Preparation{
				Prompt: "Mode " + info.Mode + ", view 0.",
				Skills: []Skill{{Name: "s", Tools: tools}},
				Refuse: func(name string) string {
					return fmt.Sprintf("Tool %s is not allowed in %s mode.", name, info.Mode)
				},
				Refresh: func(context.Context) (string, error) {
					n := refreshes.Add(1)
					return fmt.Sprintf("Mode %s, view %d.", info.Mode, n), nil
				},
			}, nil
		},
	})
}

func TestModeResolutionAndRecord(t *testing.T) {
	h := newHarness(t, nil)
	var refreshes, runs atomic.Int64
	modalAgent(h, &refreshes, &runs)
	ctx := context.Background()
	run := func(t *testing.T, req TurnRequest) *Turn {
		t.Helper()
		req.AgentID, req.Message = "modal", "hi"
		tr, err := h.rt.StartTurn(ctx, req)
		if err != nil {
			t.Fatalf("start turn: %v", err)
		}
		var ev events
		tr.Run(ctx, ev.add)
		checkEnd(t, ev, false)
		return tr
	}
	systemOf := func() string { r := agentCalls(h); return r[len(r)-1].Messages[0].Content }

	tests := []struct {
		name          string
		create, again string // modes asked for on the first and the second turn
		wantRecorded  string
		wantFirst     string
		wantSecond    string
	}{
		{"default recorded", "", "", "teach", "teach", "teach"},
		{"asked mode recorded and kept", "lab", "", "lab", "lab", "lab"},
		{"asked mode overrides for one turn", "", "lab", "teach", "teach", "lab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newKey()
			if tr := run(t, TurnRequest{Key: k, Mode: tc.create}); tr.Mode() != tc.wantFirst {
				t.Fatalf("first turn mode = %q, want %q", tr.Mode(), tc.wantFirst)
			}
			if !strings.Contains(systemOf(), "Mode "+tc.wantFirst+",") {
				t.Fatalf("first system prompt = %q", systemOf())
			}
			if tr := run(t, TurnRequest{Key: k, Mode: tc.again}); tr.Mode() != tc.wantSecond {
				t.Fatalf("second turn mode = %q, want %q", tr.Mode(), tc.wantSecond)
			}
			if !strings.Contains(systemOf(), "Mode "+tc.wantSecond+",") {
				t.Fatalf("second system prompt = %q", systemOf())
			}
			if got := h.session(k).Metadata[store.MetadataCopilotMode]; got != tc.wantRecorded {
				t.Fatalf("recorded mode = %v, want %q", got, tc.wantRecorded)
			}
		})
	}

	t.Run("unknown mode refused before anything is stored", func(t *testing.T) {
		k := newKey()
		_, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "modal", Message: "hi", Mode: "root"})
		if !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("err = %v, want ErrInvalidRequest", err)
		}
		if _, err := h.st.GetSession(ctx, k); err == nil {
			t.Fatal("a session was created for a refused turn")
		}
	})
	t.Run("agent without modes records none", func(t *testing.T) {
		k := newKey()
		checkEnd(t, h.turn(k, "hi"), false)
		if _, ok := h.session(k).Metadata[store.MetadataCopilotMode]; ok {
			t.Fatalf("metadata = %v", h.session(k).Metadata)
		}
	})
	t.Run("stateless turn gets the default mode", func(t *testing.T) {
		res, err := h.rt.RunStateless(ctx, StatelessRequest{AgentID: "modal", Messages: userMessages("hi")}, nil)
		if err != nil || res.Error != "" {
			t.Fatalf("run: %v %v", err, res)
		}
		if !strings.Contains(systemOf(), "Mode teach,") {
			t.Fatalf("system prompt = %q", systemOf())
		}
		if _, err := h.rt.RunStateless(ctx, StatelessRequest{AgentID: "modal", Messages: userMessages("hi"), Mode: "root"}, nil); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("unknown stateless mode: err = %v", err)
		}
	})
}

func TestToolOutsideModeIsRefused(t *testing.T) {
	h := newHarness(t, nil)
	var refreshes, runs atomic.Int64
	modalAgent(h, &refreshes, &runs)
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_c", Name: "change", Arguments: "{}"}}}, llmtest.Reply{Text: "I cannot."})
	k := newKey()
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "modal", Message: "change it"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	if runs.Load() != 0 {
		t.Fatal("a refused tool ran")
	}
	ends := ev.ofType(EventToolEnd)
	if len(ends) != 1 || ends[0].ToolOutput != "Tool change is not allowed in teach mode." {
		t.Fatalf("tool_end = %+v", ends)
	}
	if names := toolNames(h.requests()[0]); names != "add" {
		t.Fatalf("tools offered in teach mode = %s", names)
	}
	msgs := h.messages(k)
	last := msgs[len(msgs)-2]
	if last.Name != "change" || last.ToolCallID != "call_c" || last.Metadata["error"] != true {
		t.Fatalf("stored tool message = %+v", last)
	}
	if refreshes.Load() != 0 {
		t.Fatalf("a refused tool refreshed the prompt %d times", refreshes.Load())
	}
}

func TestRefreshAfterSideEffects(t *testing.T) {
	h := newHarness(t, nil)
	var refreshes, runs atomic.Int64
	modalAgent(h, &refreshes, &runs)
	h.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_c1", Name: "change", Arguments: "{}"}, {ID: "call_c2", Name: "change", Arguments: "{}"}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a2", Name: "add", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{Text: "Done."},
	)
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: newKey(), AgentID: "modal", Message: "go", Mode: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	if runs.Load() != 2 {
		t.Fatalf("change ran %d times", runs.Load())
	}
	// One refresh for the step with two changes; none for read-only steps.
	if refreshes.Load() != 1 {
		t.Fatalf("refreshes = %d, want 1", refreshes.Load())
	}
	want := []string{"view 0", "view 0", "view 1", "view 1"}
	reqs := agentCalls(h)
	if len(reqs) != len(want) {
		t.Fatalf("%d LLM calls", len(reqs))
	}
	for i, w := range want {
		if sys := reqs[i].Messages[0].Content; !strings.Contains(sys, w) {
			t.Fatalf("call %d system prompt = %q, want %s", i+1, sys, w)
		}
	}
}

func TestToolOwnTimeout(t *testing.T) {
	waiter := Tool{Name: "wait", Timeout: 30 * time.Millisecond, Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	h := newHarness(t, []Tool{waiter})
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "wait", Arguments: "{}"}}}, llmtest.Reply{Text: "ok"})
	ev := h.turn(newKey(), "wait")
	checkEnd(t, ev, false)
	ends := ev.ofType(EventToolEnd)
	if len(ends) != 1 || ends[0].ToolOutput != "Error: tool wait timed out after 30ms." {
		t.Fatalf("tool_end = %+v", ends)
	}
}

// agentCalls are the LLM requests of the agent "Base." (the title call
// left out).
func agentCalls(h *harness) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range h.requests() {
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "Base.") {
			out = append(out, r)
		}
	}
	return out
}

func toolNames(r llmtest.Request) string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	return strings.Join(names, ",")
}

func userMessages(text string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}
}

// TestConfigurationSettings: the user's LLM configuration gives the turn
// its temperature (a request's own wins), its max_tokens and, when the
// request names none, its mode (before the session's recorded one).
func TestConfigurationSettings(t *testing.T) {
	h := newHarness(t, nil)
	var refreshes, runs atomic.Int64
	modalAgent(h, &refreshes, &runs)
	cfgTemp, reqTemp := float32(0.2), float32(1.5)
	h.res.mu.Lock()
	h.res.temperature, h.res.maxTokens, h.res.mode = &cfgTemp, 321, "lab"
	h.res.mu.Unlock()
	ctx := context.Background()

	k := newKey()
	tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "modal", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	tr.Run(ctx, func(Event) {})
	r := agentCalls(h)[0]
	if r.Temperature == nil || *r.Temperature != cfgTemp || r.MaxTokens != 321 || tr.Mode() != "lab" {
		t.Fatalf("temperature %v, max_tokens %d, mode %q", r.Temperature, r.MaxTokens, tr.Mode())
	}
	if got := h.session(k).CopilotMode(); got != "lab" {
		t.Fatalf("recorded mode %q", got)
	}

	// The web UI's mode switch edits the default configuration: the open
	// session's next turn follows it, the session keeps its recorded mode
	// and each answer records the mode it ran under.
	h.res.mu.Lock()
	h.res.mode = "teach"
	h.res.mu.Unlock()
	tr, err = h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "modal", Message: "again", Temperature: &reqTemp})
	if err != nil {
		t.Fatal(err)
	}
	tr.Run(ctx, func(Event) {})
	calls := agentCalls(h)
	r = calls[len(calls)-1]
	if r.Temperature == nil || *r.Temperature != reqTemp || tr.Mode() != "teach" {
		t.Fatalf("temperature %v, mode %q", r.Temperature, tr.Mode())
	}
	if got := h.session(k).CopilotMode(); got != "lab" {
		t.Fatalf("recorded mode after a switch %q, want the creation's", got)
	}
	var answerModes []any
	for _, m := range h.messages(k) {
		if m.Role == store.RoleAssistant {
			answerModes = append(answerModes, m.Metadata[store.MetadataCopilotMode])
		}
	}
	if len(answerModes) != 2 || answerModes[0] != "lab" || answerModes[1] != "teach" {
		t.Fatalf("answers record modes %v, want [lab teach]", answerModes)
	}

	// Without a configured mode, the session's recorded one applies.
	h.res.mu.Lock()
	h.res.mode = ""
	h.res.mu.Unlock()
	tr, err = h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "modal", Message: "once more"})
	if err != nil {
		t.Fatal(err)
	}
	tr.Run(ctx, func(Event) {})
	if tr.Mode() != "lab" {
		t.Fatalf("mode without a configured one %q, want the session's", tr.Mode())
	}

	// On /v1 a client's smaller max_tokens holds, a larger one is capped.
	for _, tc := range []struct{ asked, want int }{{0, 321}, {100, 100}, {5000, 321}} {
		if _, err := h.rt.RunStateless(ctx, StatelessRequest{AgentID: "modal", Messages: userMessages("hi"), MaxTokens: tc.asked}, nil); err != nil {
			t.Fatal(err)
		}
		calls := agentCalls(h)
		if got := calls[len(calls)-1].MaxTokens; got != tc.want {
			t.Errorf("max_tokens %d asked: sent %d, want %d", tc.asked, got, tc.want)
		}
	}
}
