package agent

import (
	"strings"
	"sync"

	"agentchat/internal/contextwin"
	"agentchat/internal/llm"

	openai "github.com/sashabaranov/go-openai"
)

// window fits the messages of each LLM call into the model's context
// window (DESIGN.md "Context window"): the system prompts and the running
// turn are always sent; older turns go first, whole, so that a tool
// message never loses the assistant message that called it. What is
// stored is never trimmed.
type window struct {
	counter  *contextwin.Counter
	limitK   int
	strategy string
	reserve  int // max_tokens, kept free for the answer
	// pinned is the number of leading messages always sent (the system
	// prompts); current the index of the running turn's first message.
	pinned, current int
}

// counters keeps one token counter per model, so that message counts are
// cached across turns.
type counters struct {
	mu sync.Mutex
	m  map[string]*contextwin.Counter
}

// maxCounters bounds the models kept; past it the map is emptied.
const maxCounters = 256

func (c *counters) get(model string) *contextwin.Counter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cn, ok := c.m[model]; ok {
		return cn
	}
	if c.m == nil || len(c.m) >= maxCounters {
		c.m = map[string]*contextwin.Counter{}
	}
	cn := contextwin.NewCounter(model)
	c.m[model] = cn
	return cn
}

// newWindow returns the window of a configuration over msgs, whose running
// turn starts at current; nil when the configuration sets no context
// limit. pinned is the number of leading system messages.
func (r *Runtime) newWindow(conf llm.Resolved, maxTokens int, msgs []openai.ChatCompletionMessage, current int) *window {
	if conf.ContextLimit <= 0 || conf.Client == nil {
		return nil
	}
	pinned := 0
	for pinned < current && (msgs[pinned].Role == openai.ChatMessageRoleSystem || msgs[pinned].Role == openai.ChatMessageRoleDeveloper) {
		pinned++
	}
	return &window{
		counter: r.counters.get(conf.Client.Model()), limitK: conf.ContextLimit, strategy: conf.ContextStrategy,
		reserve: maxTokens, pinned: pinned, current: current,
	}
}

// fit returns the messages to send: the pinned ones, the newest whole
// turns of the history that fit, and the running turn; a
// *contextwin.TooLargeError when the pinned messages, the tools and the
// running turn alone do not fit.
func (w *window) fit(msgs []openai.ChatCompletionMessage, tools []openai.Tool) ([]openai.ChatCompletionMessage, error) {
	var system strings.Builder
	for _, m := range msgs[:w.pinned] {
		system.WriteString(m.Content)
		system.WriteByte('\n')
	}
	kept, _, err := w.counter.FitWindow(w.limitK, w.strategy, w.reserve, system.String(), tools, msgs[w.pinned:w.current], msgs[w.current:])
	if err != nil {
		return nil, err
	}
	if len(kept) == w.current-w.pinned {
		return msgs, nil
	}
	out := make([]openai.ChatCompletionMessage, 0, w.pinned+len(kept)+len(msgs)-w.current)
	out = append(out, msgs[:w.pinned]...)
	out = append(out, kept...)
	return append(out, msgs[w.current:]...), nil
}
