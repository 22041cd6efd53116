package llm

import (
	"crypto/rand"
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// accumulator builds the assistant message of one streamed attempt and
// reports each increment as it arrives.
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     []*callSlot
	finish    string
	usage     Usage
	logprobs  []TokenLogProb
	model     string
	// delivered is true once a Delta reached the caller: no retry after it.
	delivered bool
	// chunks counts decoded chunks.
	chunks int
	// budget counts the answer against its cap (Config.MaxAnswerBytes);
	// a zero max means no cap.
	budget budget
}

// streamChunk is the part of a chat.completion.chunk the client uses; it
// is decoded in place, chunk after chunk, to keep the stream
// allocation-light.
type streamChunk struct {
	Model   string         `json:"model"`
	Choices []streamChoice `json:"choices"`
	Usage   *openai.Usage  `json:"usage"`
	// lastModel is the model of an earlier chunk, kept by reset so that
	// decodeFast reuses it (see chunkParser.model).
	lastModel string
}

type streamChoice struct {
	Index        int             `json:"index"`
	Delta        streamDelta     `json:"delta"`
	Logprobs     *streamLogProbs `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type streamDelta struct {
	Content          string            `json:"content"`
	ReasoningContent string            `json:"reasoning_content"`
	Refusal          string            `json:"refusal"`
	ToolCalls        []openai.ToolCall `json:"tool_calls"`
}

// decode parses one data line into c, reusing its memory: the usual
// chunk without reflection (decodeFast), any other with encoding/json.
func (c *streamChunk) decode(raw []byte) error {
	c.reset()
	if decodeFast(raw, c) {
		return nil
	}
	c.reset()
	return json.Unmarshal(raw, c)
}

// reset empties c, keeping the memory of its choices and its last model.
func (c *streamChunk) reset() {
	choices := c.Choices[:cap(c.Choices)]
	clear(choices)
	*c = streamChunk{Choices: choices[:0], lastModel: c.lastModel}
}

// callSlot accumulates one tool call.
type callSlot struct {
	index     int // the server's index, -1 when it sent none
	id        string
	serverID  bool // id came from the server (not generated)
	name      string
	typ       openai.ToolType
	arguments strings.Builder
}

// reset empties the accumulator for a new attempt.
func (a *accumulator) reset() {
	a.content.Reset()
	a.reasoning.Reset()
	a.calls = a.calls[:0]
	a.finish = ""
	a.usage = Usage{}
	a.logprobs = nil
	a.model = ""
	a.delivered = false
	a.chunks = 0
	a.budget.used = 0
}

// add folds one chunk in, calling emit for each increment in order.
func (a *accumulator) add(chunk *streamChunk, emit func(Delta) error) error {
	a.chunks++
	if a.model == "" && chunk.Model != "" {
		a.model = chunk.Model
	}
	if u := chunk.Usage; u != nil {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		if d := u.PromptTokensDetails; d != nil {
			a.usage.CachedTokens = d.CachedTokens
		}
		if a.usage.TotalTokens == 0 {
			a.usage.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	}
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		if ch.Index != 0 {
			continue // n > 1 is never requested; keep the first choice only
		}
		var lp []TokenLogProb
		if l := ch.Logprobs; l != nil {
			lp = append(append(lp, l.Content...), l.Refusal...)
			a.logprobs = append(a.logprobs, lp...)
		}
		if err := a.addDelta(&ch.Delta, lp, emit); err != nil {
			return err
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return nil
}

func (a *accumulator) deliver(emit func(Delta) error, d Delta) error {
	a.delivered = true
	return emit(d)
}

// take counts s against the answer's cap: the part of s that fits, and
// the too-large error when s did not fit whole.
func (a *accumulator) take(s string) (string, error) {
	if a.budget.max <= 0 {
		return s, nil
	}
	part, cut := a.budget.take(s)
	if cut {
		return part, answerTooLarge(a.budget.max)
	}
	return part, nil
}

// addDelta folds one choice's delta in; lp, the log probabilities of its
// content, go with its first content increment (alone when it has none).
func (a *accumulator) addDelta(d *streamDelta, lp []TokenLogProb, emit func(Delta) error) error {
	if d.ReasoningContent != "" {
		text, over := a.take(d.ReasoningContent)
		if text != "" {
			a.reasoning.WriteString(text)
			if err := a.deliver(emit, Delta{Reasoning: text}); err != nil {
				return err
			}
		}
		if over != nil {
			return over
		}
	}
	for _, text := range [2]string{d.Content, d.Refusal} {
		if text == "" {
			continue
		}
		text, over := a.take(text)
		if text != "" {
			a.content.WriteString(text)
			if err := a.deliver(emit, Delta{Content: text, LogProbs: lp}); err != nil {
				return err
			}
			lp = nil
		}
		if over != nil {
			return over
		}
	}
	if len(lp) > 0 {
		if err := a.deliver(emit, Delta{LogProbs: lp}); err != nil {
			return err
		}
	}
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		pos, first := a.slotFor(tc)
		s := a.calls[pos]
		if first {
			// A new call's id and name count too, so that countless empty
			// calls cannot grow the answer; one past the cap is dropped.
			if _, over := a.take(s.id + s.name); over != nil {
				a.calls = a.calls[:pos]
				return over
			}
			if err := a.deliver(emit, Delta{ToolCall: &ToolCallDelta{
				Index: pos, ID: s.id, Name: s.name, First: true,
			}}); err != nil {
				return err
			}
		}
		frag := tc.Function.Arguments
		if frag == "" {
			continue
		}
		frag, over := a.take(frag)
		if frag != "" {
			s.arguments.WriteString(frag)
			if err := a.deliver(emit, Delta{ToolCall: &ToolCallDelta{
				Index: pos, ID: s.id, Name: s.name, Arguments: s.arguments.String(), Fragment: frag,
			}}); err != nil {
				return err
			}
		}
		if over != nil {
			return over
		}
	}
	return nil
}

// slotFor finds (or opens) the call a fragment belongs to: by index when
// the server sends one (a new id under a known index is a new call, for
// servers that reuse index 0), else by id, else the last call.
func (a *accumulator) slotFor(tc *openai.ToolCall) (pos int, first bool) {
	if tc.Index != nil {
		idx := *tc.Index
		for i := len(a.calls) - 1; i >= 0; i-- {
			s := a.calls[i]
			if s.index != idx {
				continue
			}
			if tc.ID != "" && s.serverID && tc.ID != s.id {
				break // same index, another call
			}
			a.complete(s, tc)
			return i, false
		}
		return a.open(idx, tc), true
	}
	if tc.ID != "" {
		for i, s := range a.calls {
			if s.serverID && s.id == tc.ID {
				a.complete(s, tc)
				return i, false
			}
		}
		return a.open(-1, tc), true
	}
	if tc.Function.Name == "" && len(a.calls) > 0 {
		i := len(a.calls) - 1
		a.complete(a.calls[i], tc)
		return i, false
	}
	return a.open(-1, tc), true
}

// complete fills fields a later fragment brings (never changes the id,
// which callers already saw).
func (a *accumulator) complete(s *callSlot, tc *openai.ToolCall) {
	if s.name == "" && tc.Function.Name != "" {
		s.name = tc.Function.Name
	}
	if s.typ == "" && tc.Type != "" {
		s.typ = tc.Type
	}
}

func (a *accumulator) open(idx int, tc *openai.ToolCall) int {
	s := &callSlot{index: idx, id: tc.ID, serverID: tc.ID != "", name: tc.Function.Name, typ: tc.Type}
	if s.id == "" {
		s.id = "call_" + rand.Text()
	}
	a.calls = append(a.calls, s)
	return len(a.calls) - 1
}

// result is the message accumulated so far.
func (a *accumulator) result() *Result {
	r := &Result{
		Content:      a.content.String(),
		Reasoning:    a.reasoning.String(),
		FinishReason: a.finish,
		Usage:        a.usage,
		Model:        a.model,
		LogProbs:     a.logprobs,
	}
	if len(a.calls) > 0 {
		r.ToolCalls = make([]openai.ToolCall, len(a.calls))
		for i, s := range a.calls {
			typ := s.typ
			if typ == "" {
				typ = openai.ToolTypeFunction
			}
			r.ToolCalls[i] = openai.ToolCall{
				ID:       s.id,
				Type:     typ,
				Function: openai.FunctionCall{Name: s.name, Arguments: s.arguments.String()},
			}
		}
	}
	return r
}
