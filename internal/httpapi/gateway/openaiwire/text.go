package openaiwire

import (
	"strings"
	"unicode/utf8"

	"agentchat/internal/agent"
)

// Steps separates the text of successive agent steps in one answer (see
// agent.StepSeparator): the first content of a new step gets the separator
// when content was already sent.
type Steps struct {
	sent bool
	last string
}

// Text returns the content of a content event as it is sent.
func (s *Steps) Text(ev agent.Event) string {
	c := ev.Content
	if s.sent && ev.MessageID != s.last {
		c = agent.StepSeparator + c
	}
	s.sent, s.last = true, ev.MessageID
	return c
}

// Activity renders the agent's own tool activity as reasoning text, which
// clients show as "thinking" and never run.
type Activity struct {
	// args are the arguments of agent tool calls, by call id.
	args map[string]string
}

// Limits of the activity text.
const (
	maxActivityArgs   = 300
	maxActivityResult = 300
)

// Text returns the reasoning text of ev, or "".
func (a *Activity) Text(ev agent.Event) string {
	switch ev.Type {
	case agent.EventReasoning:
		return ev.Content
	case agent.EventToolCall:
		if tc := ev.ToolCall; tc != nil && tc.Complete && !tc.Client {
			if a.args == nil {
				a.args = map[string]string{}
			}
			a.args[tc.ID] = tc.Arguments
		}
	case agent.EventToolStart:
		args := oneLine(a.args[ev.ToolCallID], maxActivityArgs)
		if args == "" || args == "{}" {
			return "Calling " + ev.ToolName + "\n"
		}
		return "Calling " + ev.ToolName + " " + args + "\n"
	case agent.EventToolEnd:
		return ev.ToolName + " → " + oneLine(ev.ToolOutput, maxActivityResult) + "\n"
	}
	return ""
}

// oneLine collapses whitespace and clips s to n bytes.
func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
