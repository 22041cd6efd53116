package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

func call(id, name string) store.ToolCall {
	return store.ToolCall{ID: id, Type: "function", Function: store.FunctionCall{Name: name, Arguments: "{}"}}
}

func TestBuildHistory(t *testing.T) {
	user := func(s string) store.Message { return store.Message{Role: store.RoleUser, Content: s} }
	asst := func(s string, calls ...store.ToolCall) store.Message {
		return store.Message{Role: store.RoleAssistant, Content: s, ToolCalls: calls}
	}
	tool := func(id, out string) store.Message {
		return store.Message{Role: store.RoleTool, ToolCallID: id, Content: out}
	}
	const repaired = "tool:" + interruptedToolOutput
	cases := []struct {
		name    string
		in      []store.Message
		want    []string
		repairs []string // call ids
	}{
		{name: "empty"},
		{
			name: "plain exchange",
			in:   []store.Message{user("hi"), asst("hello")},
			want: []string{"user:hi", "assistant:hello"},
		},
		{
			name: "complete tool round",
			in:   []store.Message{user("q"), asst("", call("c1", "t")), tool("c1", "r1"), asst("a")},
			want: []string{"user:q", "assistant:+t#c1", "tool:r1#c1", "assistant:a"},
		},
		{
			name:    "dangling at the tail",
			in:      []store.Message{user("q"), asst("", call("c1", "t"), call("c2", "t")), tool("c1", "r1")},
			want:    []string{"user:q", "assistant:+t#c1+t#c2", "tool:r1#c1", repaired + "#c2"},
			repairs: []string{"c2"},
		},
		{
			name: "results out of order are put in call order",
			in:   []store.Message{asst("", call("c1", "t"), call("c2", "t")), tool("c2", "r2"), tool("c1", "r1")},
			want: []string{"assistant:+t#c1+t#c2", "tool:r1#c1", "tool:r2#c2"},
		},
		{
			name: "ids reused across steps",
			in: []store.Message{user("q"), asst("", call("call_0", "t")), tool("call_0", "first"),
				asst("", call("call_0", "t")), tool("call_0", "second"), asst("done")},
			want: []string{"user:q", "assistant:+t#call_0", "tool:first#call_0", "assistant:+t#call_0",
				"tool:second#call_0", "assistant:done"},
		},
		{
			name: "repair stored after a later message is used once",
			in: []store.Message{user("q"), asst("", call("c1", "t")), user("again"), tool("c1", "late"),
				asst("ok")},
			want: []string{"user:q", "assistant:+t#c1", "tool:late#c1", "user:again", "assistant:ok"},
		},
		{
			name: "orphan tool, system and empty assistant are left out",
			in: []store.Message{{Role: store.RoleSystem, Content: "old prompt"}, user("q"), tool("zz", "orphan"),
				asst(""), asst("a")},
			want: []string{"user:q", "assistant:a"},
		},
		{
			name: "duplicate result dropped",
			in:   []store.Message{asst("", call("c1", "t")), tool("c1", "r1"), tool("c1", "again")},
			want: []string{"assistant:+t#c1", "tool:r1#c1"},
		},
	}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			newID := func() string { n++; return fmt.Sprintf("id%d", n) }
			hist, repairs := buildHistory(tc.in, newID, now)
			if got := roles(hist); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			var ids []string
			for _, r := range repairs {
				ids = append(ids, r.ToolCallID)
				if r.Role != store.RoleTool || r.ID == "" || !r.CreatedAt.Equal(now) || r.Name != "t" || r.Metadata["repaired"] != true {
					t.Fatalf("repair = %+v", r)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tc.repairs, ",") {
				t.Fatalf("repairs = %v, want %v", ids, tc.repairs)
			}
		})
	}
}

func TestCleanTitle(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Simple title", "Simple title"},
		{`"Quoted title"`, "Quoted title"},
		{"\n\n  Title: Networking basics.\nextra line", "Networking basics"},
		{"**Bold** title", "Bold** title"},
		{"“Curly quotes”", "Curly quotes"},
		{"What is BGP?", "What is BGP?"},
		{"A title that is much longer than forty characters in total", "A title that is much longer than forty"},
		{"Averyveryveryveryveryverylongwordthatcannotbesplitanywhere", "Averyveryveryveryveryverylongwordthatcan"},
		{"Ünïcödé títle wïth áccents ánd móre wórds", "Ünïcödé títle wïth áccents ánd móre"},
		{"   ", ""},
	}
	for _, tc := range cases {
		if got := cleanTitle(tc.in); got != tc.want {
			t.Errorf("cleanTitle(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if n := len([]rune(cleanTitle(tc.in))); n > maxTitleRunes {
			t.Errorf("cleanTitle(%q) has %d runes", tc.in, n)
		}
	}
}

func TestFallbackTitle(t *testing.T) {
	cases := []struct{ in, want string }{
		{"short", "short"},
		{"a message\nwith   lines and more text than fits", "a message with lines and more"},
		{"ééééééééééééééééééééééééééééééééééé", "éééééééééééééééééééééééééééééé"},
	}
	for _, tc := range cases {
		if got := fallbackTitle(tc.in); got != tc.want {
			t.Errorf("fallbackTitle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStatelessMessages(t *testing.T) {
	sys := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: s}
	}
	usr := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: s}
	}
	cases := []struct {
		name   string
		system string
		in     []openai.ChatCompletionMessage
		want   []string
	}{
		{"agent prompt first, client system kept", "Agent.", []openai.ChatCompletionMessage{sys("Client."), usr("hi")},
			[]string{"system:Agent.", "system:Client.", "user:hi"}},
		{"no agent prompt", "", []openai.ChatCompletionMessage{usr("hi")}, []string{"user:hi"}},
		{"system only", "Agent.", []openai.ChatCompletionMessage{sys("Make a title.")},
			[]string{"system:Agent.", "user:Make a title."}},
		{"several system only", "", []openai.ChatCompletionMessage{sys("One."), sys("Two.")},
			[]string{"system:One.", "user:Two."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]openai.ChatCompletionMessage(nil), tc.in...)
			got := roles(statelessMessages(tc.system, in))
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if roles(in)[0] != roles(tc.in)[0] {
				t.Fatalf("the client's slice was modified")
			}
		})
	}
}
