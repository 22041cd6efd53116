package agent

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"agentchat/internal/llm"

	openai "github.com/sashabaranov/go-openai"
)

// Title limits.
const (
	maxTitleRunes    = 40
	fallbackRunes    = 30
	titleInputRunes  = 1000
	titleMaxTokens   = 256 // room for reasoning models; a title itself takes ~10
	titleInstruction = "You name chat conversations. Reply with a short, specific title " +
		"for the conversation below: at most 6 words, no quotes, no trailing punctuation, " +
		"in the language of the user. Reply with the title only."
)

// title generates the session's title with one non-streamed LLM call
// (counted in the turn's statistics when it succeeds), bounded by its own
// short timeout, and leaves it to finish, which stores it unless the user
// renamed the session meanwhile. The model sees the exchange just answered (question and
// answer belong together even when earlier turns failed); on failure the
// first characters of the session's first user message are used.
func (tr *turnRun) title(firstUser, question, answer string) {
	t := tr.t
	req := llm.Request{
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: titleInstruction},
			{Role: openai.ChatMessageRoleUser, Content: "User: " + truncateRunes(question, titleInputRunes) +
				"\n\nAssistant: " + truncateRunes(answer, titleInputRunes)},
		},
		MaxTokens: titleMaxTokens,
	}
	title := ""
	ctx, cancel := context.WithTimeout(tr.ctx, t.r.titleTimeout)
	res, err := t.llm.Client.Complete(ctx, req)
	cancel()
	if err == nil {
		tr.used.addCall(res.Usage, t.llm.Prices)
		title = cleanTitle(res.Content)
	} else {
		t.r.log.InfoContext(tr.ctx, "generate session title", "session", t.req.Key.ThreadID, "err", err)
	}
	if title == "" {
		title = fallbackTitle(firstUser)
	}
	// Stored by finish, in the write that ends the turn
	// (store.FinishTitledTurn).
	tr.newTitle = title
}

// cleanTitle keeps the first non-empty line of a model's answer, without a
// "Title:" label, quotes, markdown or trailing punctuation, at most 40
// characters (cut at a word boundary when possible).
func cleanTitle(s string) string {
	line := ""
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	if len(line) >= 6 && strings.EqualFold(line[:6], "title:") {
		line = line[6:]
	}
	line = strings.Trim(line, " \t\"'`*#_“”‘’«»")
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > maxTitleRunes {
		cut := string(r[:maxTitleRunes])
		if r[maxTitleRunes] != ' ' {
			// Drop the cut word unless that leaves too little.
			if i := strings.LastIndexByte(cut, ' '); i >= maxTitleRunes/2 {
				cut = cut[:i]
			}
		}
		line = cut
	}
	return strings.TrimRightFunc(line, func(r rune) bool {
		return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != ')' && r != '?' && r != '!')
	})
}

// fallbackTitle is the first 30 characters of the message, on one line.
func fallbackTitle(msg string) string {
	return strings.TrimSpace(truncateRunes(strings.Join(strings.Fields(msg), " "), fallbackRunes))
}

// truncateRunes returns the first n runes of s.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
