package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

func TestSimpleAnswerStreamsAndPersists(t *testing.T) {
	h := newHarness(t, nil)
	h.llm.Enqueue(
		llmtest.Reply{Text: "Hello there, my friend", Usage: &llmtest.Usage{PromptTokens: 11, CompletionTokens: 4}},
		llmtest.Reply{Text: "\"Friendly greeting\"\n", Usage: &llmtest.Usage{PromptTokens: 7, CompletionTokens: 2}},
	)
	k := newKey()
	ev := h.turn(k, "Say hello")
	checkEnd(t, ev, false)

	contents := ev.ofType(EventContent)
	var got []string
	for _, e := range contents {
		got = append(got, e.Content)
		if e.MessageID == "" || e.MessageID != contents[0].MessageID {
			t.Fatalf("content events do not share one message id: %s", ev)
		}
	}
	if want := []string{"Hello", " there,", " my", " friend"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("content deltas = %q, want word by word %q", got, want)
	}

	msgs := h.messages(k)
	if len(msgs) != 2 {
		t.Fatalf("stored %d messages, want 2: %+v", len(msgs), msgs)
	}
	if m := msgs[0]; m.Role != store.RoleUser || m.Content != "Say hello" {
		t.Fatalf("first message = %+v", m)
	}
	if m := msgs[1]; m.Role != store.RoleAssistant || m.Content != "Hello there, my friend" || m.ID != contents[0].MessageID {
		t.Fatalf("second message = %+v (want id %s)", m, contents[0].MessageID)
	}

	reqs := h.requests()
	if len(reqs) != 2 {
		t.Fatalf("LLM requests = %d, want answer + title", len(reqs))
	}
	first := reqs[0]
	if !first.Stream || !first.IncludeUsage() {
		t.Fatalf("answer call not streamed with usage: stream=%v", first.Stream)
	}
	wantMsgs := []string{"system:You are a test agent.\n\nUse the test tools.", "user:Say hello"}
	if got := roles(first.Messages); strings.Join(got, "|") != strings.Join(wantMsgs, "|") {
		t.Fatalf("prompt = %q, want %q", got, wantMsgs)
	}
	if reqs[1].Stream {
		t.Fatalf("title call was streamed")
	}

	s := h.session(k)
	want := store.Session{
		Title: "Friendly greeting", MessageCount: 2, LLMCallsCount: 2,
		InputTokens: 18, OutputTokens: 6, TotalTokens: 24,
		Stats: store.Stats{Turns: 1},
	}
	if s.Title != want.Title || s.MessageCount != want.MessageCount || s.LLMCallsCount != want.LLMCallsCount ||
		s.InputTokens != want.InputTokens || s.OutputTokens != want.OutputTokens || s.TotalTokens != want.TotalTokens ||
		s.Stats.Turns != 1 || s.Stats.Errors != 0 || s.Stats.AbortedTurns != 0 || len(s.Stats.ToolCalls) != 0 {
		t.Fatalf("session = %+v\nwant %+v", s, want)
	}
	if s.LastMessageAt.IsZero() {
		t.Fatalf("last_message_at not set")
	}

	// The lease was released: another turn starts at once.
	h.turn(k, "again")
}

// roles renders messages as "role:content" (tool calls as role:+name).
func roles(msgs []openai.ChatCompletionMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
		for _, c := range m.ToolCalls {
			out[i] += "+" + c.Function.Name + "#" + c.ID
		}
		if m.ToolCallID != "" {
			out[i] += "#" + m.ToolCallID
		}
	}
	return out
}

func TestSecondTurnSendsHistory(t *testing.T) {
	h := newHarness(t, nil)
	h.llm.Enqueue(llmtest.Reply{Text: "Paris is the capital."}, llmtest.Reply{Text: "Capital of France"},
		llmtest.Reply{Text: "About two million."})
	k := newKey()
	checkEnd(t, h.turn(k, "Capital of France?"), false)
	checkEnd(t, h.turn(k, "Population?"), false)

	reqs := h.requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d, want answer, title, answer (one title only)", len(reqs))
	}
	got := roles(reqs[2].Messages)
	want := []string{"system:You are a test agent.\n\nUse the test tools.", "user:Capital of France?",
		"assistant:Paris is the capital.", "user:Population?"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("second prompt = %q\nwant %q", got, want)
	}
	s := h.session(k)
	if s.MessageCount != 4 || s.LLMCallsCount != 3 || s.Stats.Turns != 2 || s.Title != "Capital of France" {
		t.Fatalf("session after two turns = %+v", s)
	}
}

func TestToolRoundTrip(t *testing.T) {
	h := newHarness(t, []Tool{addTool(false)})
	h.llm.Enqueue(
		llmtest.Reply{Text: "Let me add.", ToolCalls: []llmtest.ToolCall{{ID: "call_add", Name: "add", Arguments: `{"a": 40, "b": 2}`}}},
		llmtest.Reply{Text: "The sum is 42."},
		llmtest.Reply{Text: "Adding numbers"},
	)
	k := newKey()
	ev := h.turn(k, "What is 40+2?")
	checkEnd(t, ev, false)

	// tool_call: first with empty arguments, cumulative, then complete.
	calls := ev.ofType(EventToolCall)
	if len(calls) < 3 {
		t.Fatalf("tool_call events = %s", ev)
	}
	if c := calls[0].ToolCall; c.Arguments != "" || c.ID != "call_add" || c.Name != "add" || c.Complete {
		t.Fatalf("first tool_call = %+v", c)
	}
	prev := ""
	for _, e := range calls[1 : len(calls)-1] {
		c := e.ToolCall
		if !strings.HasPrefix(c.Arguments, prev) || len(c.Arguments) <= len(prev) || c.Complete || c.ID != "call_add" {
			t.Fatalf("tool_call fragments not cumulative: %s", ev)
		}
		prev = c.Arguments
	}
	if c := calls[len(calls)-1].ToolCall; !c.Complete || c.Arguments != `{"a": 40, "b": 2}` || c.ID != "call_add" {
		t.Fatalf("last tool_call = %+v", c)
	}

	// Order: content, tool_call..., tool_start, tool_end, content, done.
	var order []string
	for _, e := range ev {
		if n := len(order); n == 0 || order[n-1] != string(e.Type) {
			order = append(order, string(e.Type))
		}
	}
	if got, want := strings.Join(order, ","), "content,tool_call,tool_start,tool_end,content,done"; got != want {
		t.Fatalf("event order = %s, want %s", got, want)
	}
	end := ev.ofType(EventToolEnd)[0]
	if end.ToolName != "add" || end.ToolCallID != "call_add" || end.ToolOutput != "42" {
		t.Fatalf("tool_end = %+v", end)
	}

	msgs := h.messages(k)
	var got []string
	for _, m := range msgs {
		s := m.Role + ":" + m.Content
		for _, c := range m.ToolCalls {
			s += "+" + c.Function.Name + c.Function.Arguments + "#" + c.ID
		}
		if m.ToolCallID != "" {
			s += "#" + m.ToolCallID + "/" + m.Name
		}
		got = append(got, s)
	}
	want := []string{
		"user:What is 40+2?",
		`assistant:Let me add.+add{"a": 40, "b": 2}#call_add`,
		"tool:42#call_add/add",
		"assistant:The sum is 42.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stored:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	second := roles(h.requests()[1].Messages)
	if n := len(second); n != 4 || second[2] != "assistant:Let me add.+add#call_add" || second[3] != "tool:42#call_add" {
		t.Fatalf("second prompt = %q", second)
	}
	if tools := h.requests()[0].Tools; len(tools) != 1 || tools[0].Function.Name != "add" {
		t.Fatalf("tools sent = %+v", tools)
	}

	s := h.session(k)
	if s.MessageCount != 4 || s.LLMCallsCount != 3 || s.Stats.ToolCalls["add"] != 1 {
		t.Fatalf("session = %+v", s)
	}
}

func TestParallelToolCallsRunConcurrently(t *testing.T) {
	for _, interleave := range []bool{false, true} {
		t.Run(fmt.Sprintf("interleave=%v", interleave), func(t *testing.T) {
			// Each call waits until both have started: run one after the
			// other, the first would give up and the test would fail.
			var started atomic.Int32
			both := make(chan struct{})
			wait := Tool{
				Name: "wait", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
				Run: func(ctx context.Context, args json.RawMessage) (string, error) {
					if started.Add(1) == 2 {
						close(both)
					}
					select {
					case <-both:
						return "done " + string(args), nil
					case <-time.After(20 * time.Second):
						return "", errors.New("the other call never started")
					}
				},
			}
			h := newHarness(t, []Tool{wait})
			h.llm.Enqueue(
				llmtest.Reply{Interleave: interleave, ToolCalls: []llmtest.ToolCall{
					{ID: "call_one", Name: "wait", Arguments: `{"n":1}`},
					{ID: "call_two", Name: "wait", Arguments: `{"n":2}`},
				}},
				llmtest.Reply{Text: "Both done."},
			)
			k := newKey()
			ev := h.turn(k, "run both")
			checkEnd(t, ev, false)

			complete := map[string]string{}
			for _, e := range ev.ofType(EventToolCall) {
				c := e.ToolCall
				if want := map[string]int{"call_one": 0, "call_two": 1}[c.ID]; c.Index != want {
					t.Fatalf("call %s has index %d", c.ID, c.Index)
				}
				if c.Complete {
					complete[c.ID] = c.Arguments
				}
			}
			if complete["call_one"] != `{"n":1}` || complete["call_two"] != `{"n":2}` {
				t.Fatalf("complete tool calls = %v", complete)
			}
			outputs := map[string]string{}
			for _, e := range ev.ofType(EventToolEnd) {
				outputs[e.ToolCallID] = e.ToolOutput
			}
			if outputs["call_one"] != `done {"n":1}` || outputs["call_two"] != `done {"n":2}` {
				t.Fatalf("tool outputs = %v", outputs)
			}
			// Tool messages are stored in call order.
			msgs := h.messages(k)
			if len(msgs) != 5 || msgs[2].ToolCallID != "call_one" || msgs[3].ToolCallID != "call_two" {
				t.Fatalf("stored = %+v", msgs)
			}
			if s := h.session(k); s.Stats.ToolCalls["wait"] != 2 {
				t.Fatalf("tool stats = %v", s.Stats.ToolCalls)
			}
		})
	}
}

func TestToolFailuresBecomeToolMessages(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tools := []Tool{
		addTool(false),
		{Name: "fail", Run: func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("the backend said no")
		}},
		{Name: "boom", Run: func(context.Context, json.RawMessage) (string, error) {
			panic("kaboom")
		}},
		{Name: "slow", Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
		{Name: "stuck", Run: func(context.Context, json.RawMessage) (string, error) {
			<-release // ignores its context
			return "late", nil
		}},
		{Name: "noimpl"},
	}
	cases := []struct {
		name, tool, args, want string
	}{
		{"unknown tool", "nope", `{}`, `Error: unknown tool "nope". Available tools: add, boom, fail, noimpl, slow, stuck.`},
		{"error", "fail", `{}`, "Error: tool fail failed: the backend said no"},
		{"panic", "boom", `{}`, "Error: tool boom failed: the tool crashed: kaboom"},
		{"timeout honouring ctx", "slow", `{}`, "Error: tool slow timed out after 50ms."},
		{"timeout ignoring ctx", "stuck", `{}`, "Error: tool stuck timed out after 50ms."},
		{"invalid json", "add", `{"a": 1,`, "Error: the arguments of tool add are not a valid JSON object"},
		{"not an object", "add", `[1,2]`, "Error: the arguments of tool add are not a valid JSON object"},
		{"no implementation", "noimpl", `{}`, "Error: tool noimpl failed: tool noimpl has no implementation"},
		{"empty arguments", "add", ``, "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tools, func(o *Options) { o.ToolTimeout = 50 * time.Millisecond })
			h.llm.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_x", Name: tc.tool, Fragments: []string{tc.args}}}},
				llmtest.Reply{Text: "I could not do it."},
			)
			k := newKey()
			ev := h.turn(k, "try it")
			checkEnd(t, ev, false)
			end := ev.ofType(EventToolEnd)
			if len(end) != 1 || !strings.HasPrefix(end[0].ToolOutput, tc.want) {
				t.Fatalf("tool_end = %+v, want output starting with %q", end, tc.want)
			}
			msgs := h.messages(k)
			if len(msgs) != 4 || msgs[2].Role != store.RoleTool || msgs[2].Content != end[0].ToolOutput {
				t.Fatalf("stored = %+v", msgs)
			}
			failed := msgs[2].Metadata["error"] == true
			if wantFailed := strings.HasPrefix(tc.want, "Error"); failed != wantFailed {
				t.Fatalf("tool message metadata = %v, want error=%v", msgs[2].Metadata, wantFailed)
			}
			// The model saw the error and answered.
			if got := roles(h.requests()[1].Messages); got[len(got)-1] != "tool:"+end[0].ToolOutput+"#call_x" {
				t.Fatalf("second prompt = %q", got)
			}
			if s := h.session(k); s.Stats.ToolCalls[tc.tool] != 1 || s.Stats.Errors != 0 {
				t.Fatalf("stats = %+v", s.Stats)
			}
		})
	}
}

func TestMaxSteps(t *testing.T) {
	h := newHarness(t, []Tool{addTool(false)}, func(o *Options) { o.MaxSteps = 3 })
	h.llm.SetHandler(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "add", Arguments: `{"a":1,"b":1}`}},
			Usage: &llmtest.Usage{PromptTokens: 5, CompletionTokens: 1}}
	})
	k := newKey()
	ev := h.turn(k, "loop forever")
	msg := checkEnd(t, ev, true)
	if !strings.Contains(msg, "maximum of 3 steps") {
		t.Fatalf("error = %q", msg)
	}
	if n := len(h.requests()); n != 3 {
		t.Fatalf("LLM calls = %d, want 3 (no title call)", n)
	}
	s := h.session(k)
	if s.MessageCount != 7 || len(h.messages(k)) != 7 || s.LLMCallsCount != 3 || s.InputTokens != 15 ||
		s.OutputTokens != 3 || s.Stats.Errors != 1 || s.Stats.Turns != 1 || s.Stats.ToolCalls["add"] != 3 ||
		s.Title != store.DefaultTitle {
		t.Fatalf("session = %+v", s)
	}
}

func TestTitle(t *testing.T) {
	t.Run("generated once", func(t *testing.T) {
		h := newHarness(t, nil)
		h.llm.Enqueue(llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "Title: **A very long generated title that goes on and on.**"},
			llmtest.Reply{Text: "two"})
		k := newKey()
		h.turn(k, "first")
		h.turn(k, "second")
		if n := len(h.requests()); n != 3 {
			t.Fatalf("requests = %d, want 3", n)
		}
		if s := h.session(k); s.Title != "A very long generated title that goes on" || s.TitleSetByUser {
			t.Fatalf("title = %q", s.Title)
		}
	})
	t.Run("after a failed first turn", func(t *testing.T) {
		h := newHarness(t, nil)
		h.llm.Enqueue(llmtest.Reply{Status: 500}, llmtest.Reply{Text: "OSPF uses areas."}, llmtest.Reply{Text: "OSPF areas"})
		k := newKey()
		h.turn(k, "err first try")
		h.turn(k, "how does OSPF use areas?")
		reqs := h.requests()
		titleReq := reqs[len(reqs)-1].Messages
		prompt := titleReq[len(titleReq)-1].Content
		if !strings.Contains(prompt, "User: how does OSPF use areas?") || strings.Contains(prompt, "err first try") {
			t.Fatalf("the title call must see the exchange it names: %q", prompt)
		}
		if s := h.session(k); s.Title != "OSPF areas" {
			t.Fatalf("title = %q", s.Title)
		}
	})
	t.Run("fallback on error", func(t *testing.T) {
		h := newHarness(t, nil)
		h.llm.Enqueue(llmtest.Reply{Text: "answer"}, llmtest.Reply{Status: 500})
		k := newKey()
		checkEnd(t, h.turn(k, "  Please  explain\nthe difference between TCP and UDP in detail"), false)
		s := h.session(k)
		if s.Title != "Please explain the difference" || s.LLMCallsCount != 1 {
			t.Fatalf("session = %+v", s)
		}
	})
	t.Run("renamed before the turn", func(t *testing.T) {
		h := newHarness(t, nil)
		k := newKey()
		if err := h.st.CreateSession(context.Background(), &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.st.RenameSession(context.Background(), k, "Mine"); err != nil {
			t.Fatal(err)
		}
		h.turn(k, "hello")
		if n := len(h.requests()); n != 1 {
			t.Fatalf("requests = %d, want no title call", n)
		}
		if s := h.session(k); s.Title != "Mine" {
			t.Fatalf("title = %q", s.Title)
		}
	})
	t.Run("renamed during the turn", func(t *testing.T) {
		var h *harness
		k := newKey()
		rename := Tool{Name: "rename", Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			_, err := h.st.RenameSession(ctx, k, "User choice")
			return "renamed", err
		}}
		h = newHarness(t, []Tool{rename})
		h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "rename", Arguments: "{}"}}},
			llmtest.Reply{Text: "done"}, llmtest.Reply{Text: "Generated"})
		checkEnd(t, h.turn(k, "hello"), false)
		s := h.session(k)
		if n := len(h.requests()); n != 3 || s.Title != "User choice" || !s.TitleSetByUser || s.LLMCallsCount != 3 {
			t.Fatalf("requests = %d, session = %+v", n, s)
		}
	})
}

// interruptible returns a reply that streams two words and hangs, and an
// onEvent that signals once both words were emitted (so that what was
// shown is known when the turn is stopped).
func interruptible() (llmtest.Reply, func(Event), <-chan struct{}) {
	first := make(chan struct{})
	var once sync.Once
	var shown strings.Builder
	return llmtest.Reply{Text: "partial answer never finished", Hang: true, HangAfter: 3},
		func(e Event) {
			if e.Type == EventContent {
				shown.WriteString(e.Content)
				if len(strings.Fields(shown.String())) == 2 {
					once.Do(func() { close(first) })
				}
			}
		}, first
}

func TestAbortStopsHangingCall(t *testing.T) {
	h := newHarness(t, nil)
	reply, onEvent, first := interruptible()
	h.llm.Enqueue(reply)
	k := newKey()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-first
		if err := h.st.RequestAbort(context.Background(), k); err != nil {
			t.Errorf("request abort: %v", err)
		}
	}()
	ev := h.turnCtx(context.Background(), k, "tell me", onEvent)
	<-done
	checkEnd(t, ev, false)
	waitFor(t, h.llm.Disconnects(), "upstream disconnect")
	checkInterrupted(t, h, k)
	if s := h.session(k); s.Stats.AbortedTurns != 1 || s.Stats.Errors != 0 {
		t.Fatalf("stats = %+v", s.Stats)
	}
}

func TestClientCancelMidStream(t *testing.T) {
	h := newHarness(t, nil)
	reply, onEvent, first := interruptible()
	h.llm.Enqueue(reply, llmtest.Reply{Text: "Second answer."})
	k := newKey()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-first
		cancel()
	}()
	ev := h.turnCtx(ctx, k, "tell me", onEvent)
	checkEnd(t, ev, false)
	waitFor(t, h.llm.Disconnects(), "upstream disconnect")
	checkInterrupted(t, h, k)
	if s := h.session(k); s.Stats.AbortedTurns != 1 || s.Stats.Errors != 0 {
		t.Fatalf("stats = %+v", s.Stats)
	}

	// The lease was released and the next turn sees what the user saw.
	ev = h.turn(k, "go on")
	checkEnd(t, ev, false)
	if ev.content() != "Second answer." {
		t.Fatalf("second turn = %s", ev)
	}
	got := roles(h.requests()[1].Messages)
	if got[2] != "assistant:partial answer" {
		t.Fatalf("second prompt = %q", got)
	}
}

// checkInterrupted checks the state after a turn stopped during "partial answer".
func checkInterrupted(t *testing.T, h *harness, k store.Key) {
	t.Helper()
	msgs := h.messages(k)
	if len(msgs) != 2 || msgs[1].Content != "partial answer" || msgs[1].Metadata["interrupted"] != true {
		t.Fatalf("stored = %+v", msgs)
	}
	s := h.session(k)
	if s.MessageCount != 2 || s.Stats.Turns != 1 || s.LLMCallsCount != 1 || s.Title != store.DefaultTitle {
		t.Fatalf("session = %+v", s)
	}
}

func TestConcurrentTurnGetsLeaseHeld(t *testing.T) {
	h := newHarness(t, nil)
	k := newKey()
	first, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.rt.StartTurn(context.Background(), TurnRequest{Key: k, Message: "two"})
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("second StartTurn error = %v, want ErrLeaseHeld", err)
	}
	var ev events
	first.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	// Released after Run: the session takes turns again.
	checkEnd(t, h.turn(k, "three"), false)
	if n := len(h.messages(k)); n != 4 {
		t.Fatalf("stored %d messages, want 4", n)
	}
}

func TestStartTurnErrors(t *testing.T) {
	h := newHarness(t, nil)
	k := newKey()
	checkEnd(t, h.turn(k, "mine"), false)

	other := k
	other.UserID = "someone-else"
	if _, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: other, Message: "let me in"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other user's session: err = %v, want ErrNotFound", err)
	}
	if n := len(h.messages(k)); n != 2 {
		t.Fatalf("owner's session changed: %d messages", n)
	}

	h.res.set(nil)
	if _, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: newKey(), Message: "hi"}); !errors.Is(err, llm.ErrNotConfigured) {
		t.Fatalf("no LLM: err = %v, want ErrNotConfigured", err)
	}
	for _, req := range []TurnRequest{
		{Key: store.Key{UserID: "u", ThreadID: "t"}, Message: "x"},
		{Key: store.Key{ProjectID: "p", ThreadID: "t"}, Message: "x"},
		{Key: newKey()},
	} {
		if _, err := h.rt.StartTurn(context.Background(), req); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("StartTurn(%+v) err = %v, want ErrInvalidRequest", req, err)
		}
	}
}

func TestStartTurnWithoutThreadID(t *testing.T) {
	h := newHarness(t, nil)
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: store.Key{ProjectID: "p", UserID: "u"}, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Session()
	if s.ThreadID == "" || s.Title != store.DefaultTitle {
		t.Fatalf("session = %+v", s)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	if n := len(h.messages(s.Key())); n != 2 {
		t.Fatalf("stored %d messages", n)
	}
}

func TestLLMErrors(t *testing.T) {
	cases := []struct {
		name  string
		reply llmtest.Reply
		// client, when set, replaces the harness client for the failing turn.
		client func(t *testing.T, h *harness) llm.Client
		want   string
		// partial is the content stored as interrupted.
		partial string
		// unreached: the scripted server gets no request.
		unreached bool
	}{
		{name: "401", reply: llmtest.Reply{Status: 401}, want: "rejected the API key"},
		{name: "429", reply: llmtest.Reply{Status: 429}, want: "rate limiting"},
		{name: "500", reply: llmtest.Reply{Status: 500}, want: "provider failed"},
		{name: "malformed", reply: llmtest.Reply{Text: "alpha beta gamma", Malformed: true, MalformedAfter: 2}, want: "malformed", partial: "alpha"},
		{name: "hang-up", reply: llmtest.Reply{Text: "alpha beta gamma", HangUp: true, HangUpAfter: 3}, want: "closed the connection", partial: "alpha beta"},
		{name: "stream error", reply: llmtest.Reply{Text: "alpha beta", StreamError: "upstream exploded " + testAPIKey, StreamErrorAfter: 2}, want: "provider failed", partial: "alpha"},
		{name: "refused", unreached: true, client: func(t *testing.T, _ *harness) llm.Client { return newClient(t, closedURL(t), 0) }, want: "Could not reach"},
		{name: "timeout", reply: llmtest.Reply{Hang: true}, client: func(t *testing.T, h *harness) llm.Client {
			return newClient(t, h.llm.BaseURL(), 100*time.Millisecond)
		}, want: "did not answer in time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			good := newClient(t, h.llm.BaseURL(), 0)
			if tc.client != nil {
				h.res.set(tc.client(t, h))
			}
			if !tc.unreached {
				h.llm.Enqueue(tc.reply)
			}
			k := newKey()
			ev := h.turn(k, "hello")
			msg := checkEnd(t, ev, true)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error = %q, want it to mention %q", msg, tc.want)
			}
			msgs := h.messages(k)
			wantStored := 1
			if tc.partial != "" {
				wantStored = 2
				if m := msgs[len(msgs)-1]; m.Content != tc.partial || m.Metadata["interrupted"] != true {
					t.Fatalf("partial = %+v", m)
				}
				if ev.content() != tc.partial {
					t.Fatalf("streamed %q, stored %q", ev.content(), tc.partial)
				}
			}
			s := h.session(k)
			if len(msgs) != wantStored || s.MessageCount != int64(wantStored) || s.Stats.Errors != 1 || s.Stats.Turns != 1 {
				t.Fatalf("stored %d messages, session = %+v", len(msgs), s)
			}

			// The session stays usable.
			h.res.set(good)
			h.llm.Enqueue(llmtest.Reply{Text: "Recovered."})
			ev = h.turn(k, "again")
			checkEnd(t, ev, false)
			if ev.content() != "Recovered." {
				t.Fatalf("next turn = %s", ev)
			}
		})
	}
}

func TestRepairDanglingToolCalls(t *testing.T) {
	h := newHarness(t, []Tool{addTool(false)})
	ctx := context.Background()
	k := newKey()
	if err := h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
		t.Fatal(err)
	}
	// A turn that crashed after the first of two tool results.
	_, err := h.st.AppendMessages(ctx, k, []store.Message{
		{Role: store.RoleUser, Content: "add twice"},
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{
			{ID: "call_a", Type: "function", Function: store.FunctionCall{Name: "add", Arguments: `{"a":1,"b":1}`}},
			{ID: "call_b", Type: "function", Function: store.FunctionCall{Name: "add", Arguments: `{"a":2,"b":2}`}},
		}},
		{Role: store.RoleTool, Content: "2", ToolCallID: "call_a", Name: "add"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.llm.Enqueue(llmtest.Reply{Text: "Sorry, where were we?"})
	checkEnd(t, h.turn(k, "hello?"), false)

	got := roles(h.requests()[0].Messages)[1:]
	want := []string{"user:add twice", "assistant:+add#call_a+add#call_b", "tool:2#call_a",
		"tool:" + interruptedToolOutput + "#call_b", "user:hello?"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("prompt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	msgs := h.messages(k)
	if len(msgs) != 6 || msgs[3].ToolCallID != "call_b" || msgs[3].Role != store.RoleTool ||
		msgs[3].Metadata["repaired"] != true || msgs[4].Content != "hello?" {
		t.Fatalf("stored = %+v", msgs)
	}
	// The crashed turn's messages, never counted by it, are counted by the
	// turn that took the lease next.
	if s := h.session(k); s.MessageCount != 6 {
		t.Fatalf("message_count = %d, want the 3 of the crashed turn + repair + user + assistant", s.MessageCount)
	}

	// Repaired once: the next turn adds nothing more.
	h.llm.Enqueue(llmtest.Reply{Text: "ok"})
	checkEnd(t, h.turn(k, "next"), false)
	if n := len(h.messages(k)); n != 8 {
		t.Fatalf("stored %d messages after the next turn, want 8", n)
	}
	if s := h.session(k); s.MessageCount != 8 {
		t.Fatalf("message_count = %d after the next turn, want 8", s.MessageCount)
	}
}

func TestTurnDeadline(t *testing.T) {
	h := newHarness(t, nil, func(o *Options) { o.TurnTimeout = 100 * time.Millisecond })
	h.llm.Enqueue(llmtest.Reply{Hang: true})
	k := newKey()
	msg := checkEnd(t, h.turn(k, "slow"), true)
	if !strings.Contains(msg, "took longer than the 100ms limit") {
		t.Fatalf("error = %q", msg)
	}
	waitFor(t, h.llm.Disconnects(), "upstream disconnect")
	if s := h.session(k); s.Stats.Errors != 1 || s.Stats.AbortedTurns != 0 {
		t.Fatalf("stats = %+v", s.Stats)
	}
}

func TestRunTwice(t *testing.T) {
	h := newHarness(t, nil)
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: newKey(), Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	ev = nil
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, true)
}

func TestReleaseWithoutRun(t *testing.T) {
	h := newHarness(t, nil)
	k := newKey()
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkEnd(t, h.turn(k, "hi again"), false)
}

func TestPrepare(t *testing.T) {
	h := newHarness(t, nil)
	var got TurnInfo
	h.rt.o.Agents.Register(&Agent{
		ID: "prepared", SystemPrompt: "Base.",
		Skills: []Skill{{Name: "unused", Prompt: "Never shown."}},
		Modes:  []string{"teach", "lab", "broken"},
		Prepare: func(_ context.Context, info TurnInfo) (Preparation, error) {
			got = info
			if info.Mode == "broken" {
				return Preparation{}, errors.New("topology unavailable")
			}
			return Preparation{Prompt: "Topology: {}", Skills: []Skill{{Name: "s", Prompt: "Skill.", Tools: []Tool{addTool(false)}}}}, nil
		},
	})
	k := newKey()
	tr, err := h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "prepared", Message: "hi", Mode: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	tr.Run(context.Background(), ev.add)
	checkEnd(t, ev, false)
	if got != (TurnInfo{ProjectID: k.ProjectID, UserID: k.UserID, Mode: "lab"}) {
		t.Fatalf("turn info = %+v", got)
	}
	req := h.requests()[0]
	if req.Messages[0].Content != "Base.\n\nSkill.\n\nTopology: {}" || len(req.Tools) != 1 {
		t.Fatalf("system = %q, tools = %d", req.Messages[0].Content, len(req.Tools))
	}

	tr, err = h.rt.StartTurn(context.Background(), TurnRequest{Key: k, AgentID: "prepared", Message: "hi", Mode: "broken"})
	if err != nil {
		t.Fatal(err)
	}
	ev = nil
	tr.Run(context.Background(), ev.add)
	if msg := checkEnd(t, ev, true); msg != "Could not prepare the agent for this turn." {
		t.Fatalf("error = %q", msg)
	}
}

func TestAbortDuringTool(t *testing.T) {
	started := make(chan struct{})
	slow := Tool{Name: "slow", Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}}
	h := newHarness(t, []Tool{slow})
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_s", Name: "slow", Arguments: "{}"}}})
	k := newKey()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-started
		if err := h.st.RequestAbort(context.Background(), k); err != nil {
			t.Errorf("request abort: %v", err)
		}
	}()
	ev := h.turn(k, "run the slow tool")
	<-done
	checkEnd(t, ev, false)
	end := ev.ofType(EventToolEnd)
	if len(end) != 1 || end[0].ToolOutput != "Error: tool slow was interrupted because the turn was stopped." {
		t.Fatalf("tool_end = %+v", end)
	}
	msgs := h.messages(k)
	if len(msgs) != 3 || msgs[1].ToolCalls[0].ID != "call_s" || msgs[2].ToolCallID != "call_s" {
		t.Fatalf("stored = %+v", msgs)
	}
	if n := len(h.requests()); n != 1 {
		t.Fatalf("LLM called %d times after the abort", n)
	}
	if s := h.session(k); s.Stats.AbortedTurns != 1 || s.Stats.Errors != 0 || s.MessageCount != 3 || s.Stats.ToolCalls["slow"] != 1 {
		t.Fatalf("session = %+v", s)
	}
}
