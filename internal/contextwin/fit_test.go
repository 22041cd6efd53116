package contextwin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

type msg = openai.ChatCompletionMessage

func user(s string) msg { return msg{Role: openai.ChatMessageRoleUser, Content: s} }
func asst(s string) msg { return msg{Role: openai.ChatMessageRoleAssistant, Content: s} }
func call(id, name, args string) msg {
	return msg{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{
		{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}}}
}
func result(id, s string) msg {
	return msg{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: s}
}

func sum(c *Counter, ms []msg) int {
	n := 0
	for _, m := range ms {
		n += c.Message(m)
	}
	return n
}

var testTools = []openai.Tool{{
	Type: openai.ToolTypeFunction,
	Function: &openai.FunctionDefinition{
		Name:        "run_command",
		Description: "Run a CLI command on a node of the topology and return its output.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"node":{"type":"string"},"command":{"type":"string"}},"required":["node","command"]}`),
	},
}}

// turnsOf splits a history into turns as Fit defines them.
func turnsOf(h []msg) [][]msg {
	var turns [][]msg
	for i, m := range h {
		if i == 0 || m.Role == openai.ChatMessageRoleUser {
			turns = append(turns, nil)
		}
		turns[len(turns)-1] = append(turns[len(turns)-1], m)
	}
	return turns
}

func TestFit(t *testing.T) {
	c := NewCounter("gpt-4o")
	const system = "You are a network assistant. Answer briefly."
	t1 := []msg{user("What is OSPF?"), asst("A link-state routing protocol.")}
	t2 := []msg{user("Show the interfaces of R1."), call("c1", "run_command", `{"node":"R1","command":"show ip interface brief"}`),
		result("c1", "Fa0/0 10.0.0.1 up up\nFa0/1 unassigned administratively down down"), asst("Fa0/0 is up; Fa0/1 is shut down.")}
	t3 := []msg{user("And R2?"), call("c2", "run_command", `{"node":"R2","command":"show ip interface brief"}`),
		result("c2", "Fa0/0 10.0.0.2 up up"), asst("R2's Fa0/0 is up.")}
	history := concat(t1, t2, t3)
	current := []msg{user("Compare them.")}
	longCurrent := []msg{user("Compare them."), call("c3", "run_command", `{"node":"R1","command":"show run"}`), result("c3", strings.Repeat("interface Fa0/0\n ip address 10.0.0.1 255.255.255.0\n!\n", 30))}
	req := c.Required(system, testTools, current)
	reqLong := c.Required(system, testTools, longCurrent)

	tests := []struct {
		name      string
		budget    int
		current   []msg
		history   []msg
		wantKept  []msg
		wantErr   bool
		wantTotal int
	}{
		{"everything fits", 1 << 20, current, history, history, false, req + sum(c, history)},
		{"exactly fits", req + sum(c, history), current, history, history, false, req + sum(c, history)},
		{"one token short drops the oldest turn", req + sum(c, history) - 1, current, history, concat(t2, t3), false, req + sum(c, concat(t2, t3))},
		{"room for the last two turns", req + sum(c, concat(t2, t3)), current, history, concat(t2, t3), false, req + sum(c, concat(t2, t3))},
		{"room for one turn and a half: one turn", req + sum(c, t3) + sum(c, t2[2:]), current, history, t3, false, req + sum(c, t3)},
		// The tool result and answer of t3 would fit, but not without the call.
		{"a turn is never split", req + sum(c, t3[1:]), current, history, []msg{}, false, req},
		{"no history fits", req, current, history, []msg{}, false, req},
		{"empty history", 1000, current, nil, nil, false, req},
		{"current with tool steps kept whole", reqLong + sum(c, t3), longCurrent, history, t3, false, reqLong + sum(c, t3)},
		{"current alone too large", req - 1, current, history, nil, true, req},
		{"zero budget", 0, current, history, nil, true, req},
		{"negative budget", -100, current, nil, nil, true, req},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, total, err := c.Fit(tt.budget, system, testTools, tt.history, tt.current)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				var tl *TooLargeError
				if !errors.Is(err, ErrTooLarge) || !errors.As(err, &tl) {
					t.Fatalf("err %T %v is not a *TooLargeError wrapping ErrTooLarge", err, err)
				}
				if tl.Need != tt.wantTotal || tl.Budget != tt.budget {
					t.Errorf("TooLargeError{Need %d, Budget %d}, want {%d, %d}", tl.Need, tl.Budget, tt.wantTotal, tt.budget)
				}
				if kept != nil {
					t.Errorf("kept = %v on error", kept)
				}
			}
			if total != tt.wantTotal {
				t.Errorf("total = %d, want %d", total, tt.wantTotal)
			}
			if err == nil && total > tt.budget {
				t.Errorf("total %d > budget %d", total, tt.budget)
			}
			if !sameMessages(kept, tt.wantKept) {
				t.Errorf("kept %d messages %s, want %d %s", len(kept), roles(kept), len(tt.wantKept), roles(tt.wantKept))
			}
		})
	}
}

func TestFitLeadingNonUserGroup(t *testing.T) {
	c := NewCounter("gpt-4")
	// A history that starts mid-turn: its leading assistant/tool messages are
	// the oldest group and go first, together.
	lead := []msg{call("c0", "run_command", `{"node":"R1","command":"show version"}`), result("c0", "Cisco IOS 15.2"), asst("IOS 15.2.")}
	rest := []msg{user("Thanks. Uptime?"), asst("3 weeks.")}
	history := concat(lead, rest)
	req := c.Required("", nil, []msg{user("ok")})

	kept, _, err := c.Fit(req+sum(c, history), "", nil, history, []msg{user("ok")})
	if err != nil || !sameMessages(kept, history) {
		t.Fatalf("ample budget: kept %s, err %v; want everything", roles(kept), err)
	}
	kept, _, err = c.Fit(req+sum(c, history)-1, "", nil, history, []msg{user("ok")})
	if err != nil || !sameMessages(kept, rest) {
		t.Fatalf("short budget: kept %s, err %v; want %s", roles(kept), err, roles(rest))
	}
	kept, _, err = c.Fit(req+sum(c, lead[1:])+sum(c, rest), "", nil, history, []msg{user("ok")})
	if err != nil || !sameMessages(kept, rest) {
		t.Fatalf("the leading group is not split: kept %s, err %v", roles(kept), err)
	}
}

func TestFitTwelveTurnsWithToolPairs(t *testing.T) {
	c := NewCounter("openai/gpt-4.1-mini")
	var history []msg
	var turns [][]msg
	for i := range 12 {
		id := fmt.Sprintf("call_%d", i)
		turn := []msg{
			user(fmt.Sprintf("Step %d: check the neighbours of R%d.", i, i+1)),
			call(id, "run_command", fmt.Sprintf(`{"node":"R%d","command":"show ip ospf neighbor"}`, i+1)),
			result(id, strings.Repeat(fmt.Sprintf("10.0.%d.2  1  FULL/DR  00:00:3%d  10.0.%d.2  FastEthernet0/%d\n", i, i%10, i, i%2), 3+i%4)),
		}
		if i%3 == 0 { // some turns make two calls
			id2 := id + "b"
			turn = append(turn, call(id2, "run_command", fmt.Sprintf(`{"node":"R%d","command":"show ip route ospf"}`, i+1)),
				result(id2, "O 10.1.0.0/24 [110/2] via 10.0.0.2"))
		}
		turn = append(turn, asst(fmt.Sprintf("R%d has %d full adjacencies.", i+1, 3+i%4)))
		turns = append(turns, turn)
		history = append(history, turn...)
	}
	system := "You manage a GNS3 lab. " + strings.Repeat("Topology: R1-R2-R3 in area 0. ", 10)
	current := []msg{user("Summarize the OSPF state of the whole lab.")}
	req := c.Required(system, testTools, current)
	if full := req + sum(c, history); full < 1500 {
		t.Fatalf("history too small for the test: %d tokens", full)
	}

	budget := req + 600 // a small window: a few turns at most
	kept, total, err := c.Fit(budget, system, testTools, history, current)
	if err != nil {
		t.Fatal(err)
	}
	if total > budget {
		t.Fatalf("total %d > budget %d", total, budget)
	}
	if len(kept) == 0 || len(kept) == len(history) {
		t.Fatalf("kept %d of %d messages; want some but not all", len(kept), len(history))
	}
	// The kept messages are the newest whole turns.
	keptTurns := turnsOf(kept)
	if !sameMessages(kept, history[len(history)-len(kept):]) {
		t.Fatalf("kept is not a suffix of history")
	}
	for i, turn := range keptTurns {
		want := turns[len(turns)-len(keptTurns)+i]
		if !sameMessages(turn, want) {
			t.Errorf("kept turn %d = %s, want %s", i, roles(turn), roles(want))
		}
	}
	assertToolPairs(t, history, kept)
	// The next older turn did not fit.
	older := turns[len(turns)-len(keptTurns)-1]
	if total+sum(c, older) <= budget {
		t.Errorf("turn of %d tokens dropped though %d of %d were used", sum(c, older), total, budget)
	}
}

// Property: for random histories and budgets, Fit either reports that the
// required part alone is too large, or keeps a suffix of whole turns whose
// total is within the budget, and the next older turn would not have fit.
func TestFitProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tooLarge, all, partial int
	defer func() {
		t.Logf("too large %d, everything kept %d, turns dropped %d", tooLarge, all, partial)
		if tooLarge == 0 || all == 0 || partial < 100 {
			t.Errorf("the random cases miss a branch")
		}
	}()
	for iter := range 300 {
		c := NewCounter([]string{"gpt-4o", "gpt-4", "claude-sonnet"}[iter%3])
		history := sampleHistory(r, r.IntN(40))
		if r.IntN(5) == 0 && len(history) > 0 { // start mid-turn
			history = history[1+r.IntN(len(history)):]
		}
		current := sampleHistory(r, 1+r.IntN(4))
		if current[0].Role != openai.ChatMessageRoleUser {
			current = append([]msg{user("go on")}, current...)
		}
		system := strings.Repeat("system prompt ", r.IntN(50))
		var tools []openai.Tool
		if r.IntN(2) == 0 {
			tools = testTools
		}
		req := c.Required(system, tools, current)
		full := req + sum(c, history)
		budget := r.IntN(full+full/4+1) - 20

		kept, total, err := c.Fit(budget, system, tools, history, current)
		if req > budget {
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Need != req || tl.Budget != budget || total != req {
				t.Fatalf("iter %d: required %d > budget %d: got kept %d, total %d, err %v", iter, req, budget, len(kept), total, err)
			}
			tooLarge++
			continue
		}
		if err != nil {
			t.Fatalf("iter %d: unexpected error %v", iter, err)
		}
		if total > budget {
			t.Fatalf("iter %d: total %d > budget %d", iter, total, budget)
		}
		if total != req+sum(c, kept) {
			t.Fatalf("iter %d: total %d != required %d + kept %d", iter, total, req, sum(c, kept))
		}
		if !sameMessages(kept, history[len(history)-len(kept):]) {
			t.Fatalf("iter %d: kept is not a suffix", iter)
		}
		if len(kept) == len(history) {
			all++
		} else {
			partial++
			if len(kept) > 0 && kept[0].Role != openai.ChatMessageRoleUser {
				t.Fatalf("iter %d: kept starts with a %s message", iter, kept[0].Role)
			}
			// The turn just before the kept suffix would have overflowed.
			rest := history[:len(history)-len(kept)]
			ts := turnsOf(rest)
			if prev := ts[len(ts)-1]; total+sum(c, prev) <= budget {
				t.Fatalf("iter %d: dropped a turn that fit", iter)
			}
		}
		assertToolPairs(t, history, kept)
	}
}

func TestFitWindowError(t *testing.T) {
	c := NewCounter("gpt-4o-mini")
	current := []msg{user(strings.Repeat("Please analyse this configuration line by line. ", 200))}
	need := c.Required("", nil, current)
	_, total, err := c.FitWindow(1, "Conservative", 0, "", nil, nil, current)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want *TooLargeError", err)
	}
	if *tl != (TooLargeError{Need: need, Budget: 600, ContextLimitK: 1, Strategy: Conservative}) || total != need {
		t.Fatalf("got %+v, total %d; need %d", *tl, total, need)
	}
	want := fmt.Sprintf("The message and the conversation's required context need about %s tokens, more than the 600 available "+
		"in this model's context window (context_limit 1 k, strategy conservative). Shorten the message or raise context_limit.", groupDigits(need))
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err, want)
	}
	// max_tokens takes the whole window.
	_, _, err = c.FitWindow(1, "", 2000, "", nil, nil, []msg{user("hi")})
	if !errors.As(err, &tl) || tl.Budget != 0 || tl.MaxTokens != 2000 || tl.Strategy != Balanced ||
		!strings.Contains(err.Error(), "Lower max_tokens") {
		t.Errorf("err = %v (%+v)", err, tl)
	}
	// And when it fits, FitWindow is Fit with Budget.
	h := []msg{user("a"), asst("b")}
	kept, total, err := c.FitWindow(128, Balanced, 4096, "sys", testTools, h, []msg{user("c")})
	k2, t2, err2 := c.Fit(Budget(128, Balanced, 4096), "sys", testTools, h, []msg{user("c")})
	if err != nil || err2 != nil || total != t2 || !sameMessages(kept, k2) || len(kept) != 2 {
		t.Errorf("FitWindow = %d, %d, %v; Fit = %d, %d, %v", len(kept), total, err, len(k2), t2, err2)
	}
}

// assertToolPairs checks that every kept tool message whose call is in the
// history follows the assistant message that called it, within kept.
func assertToolPairs(t *testing.T, history, kept []msg) {
	t.Helper()
	inHistory := map[string]bool{}
	for _, m := range history {
		for _, tc := range m.ToolCalls {
			inHistory[tc.ID] = true
		}
	}
	called := map[string]bool{}
	for _, m := range kept {
		for _, tc := range m.ToolCalls {
			called[tc.ID] = true
		}
		if m.Role == openai.ChatMessageRoleTool && inHistory[m.ToolCallID] && !called[m.ToolCallID] {
			t.Fatalf("tool message %s kept without its call (%s)", m.ToolCallID, roles(kept))
		}
	}
}

func concat(parts ...[]msg) []msg {
	var out []msg
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func sameMessages(a, b []msg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, _ := json.Marshal(a[i])
		y, _ := json.Marshal(b[i])
		if string(x) != string(y) {
			return false
		}
	}
	return true
}

func roles(ms []msg) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(m.Role)
	}
	b.WriteByte(']')
	return b.String()
}

var words = strings.Fields(`the router interface OSPF area neighbor adjacency BGP prefix route table
	VLAN trunk switch port link up down shutdown configure address mask gateway loopback ping
	traceroute latency packet loss topology node console GNS3 lab project start stop check
	a an of to in on for with is are was be this that it as by and or not we you can will`)

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteString(".")
		}
	}
	return b.String()
}

func cliOutput(r *rand.Rand, lines int) string {
	var b strings.Builder
	b.WriteString("Interface              IP-Address      OK? Method Status                Protocol\r\n")
	for i := range lines {
		fmt.Fprintf(&b, "FastEthernet%d/%-2d       10.%d.%d.%-3d      YES manual %-21s %-8s\r\n",
			i/4, i%4, r.IntN(255), r.IntN(255), r.IntN(255), []string{"up", "down", "administratively down"}[r.IntN(3)], "up")
	}
	return b.String()
}

// sampleHistory returns n messages in turns of a realistic agent chat:
// questions, tool calls with JSON arguments, command output of mixed lengths
// and answers; the last turn is cut at n.
func sampleHistory(r *rand.Rand, n int) []msg {
	var out []msg
	for len(out) < n {
		out = append(out, user(sentence(r, 8+r.IntN(60))))
		for s := range r.IntN(3) {
			id := fmt.Sprintf("call_%d_%d", len(out), s)
			node := fmt.Sprintf("R%d", 1+r.IntN(9))
			m := call(id, "run_command", fmt.Sprintf(`{"node":%q,"command":%q}`, node, "show "+sentence(r, 2+r.IntN(3))))
			if r.IntN(4) == 0 {
				id2 := id + "b"
				m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: id2, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: "get_topology", Arguments: `{}`}})
				out = append(out, m, result(id, cliOutput(r, 1+r.IntN(40))), result(id2, sentence(r, 30+r.IntN(200))))
			} else {
				out = append(out, m, result(id, cliOutput(r, 1+r.IntN(40))))
			}
		}
		out = append(out, asst(sentence(r, 20+r.IntN(400))))
	}
	return out[:n]
}
