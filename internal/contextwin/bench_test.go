package contextwin

import (
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// benchInput is a realistic request: a 200-message history (questions, tool
// calls with JSON arguments, command output of 1–40 lines, answers of 20–420
// words), a system prompt with a topology, a dozen tool schemas and a
// current user message.
func benchInput() (system string, tools []openai.Tool, history, current []openai.ChatCompletionMessage) {
	r := rand.New(rand.NewPCG(42, 42))
	history = sampleHistory(r, 200)
	current = []openai.ChatCompletionMessage{user("Which links are down now, and why?")}
	system = "You are the network assistant of a GNS3 lab.\n" + strings.Repeat("node R1 (c7200) links: Fa0/0-R2 Fa0/1-SW1\n", 40)
	for range 12 {
		tools = append(tools, testTools...)
	}
	return
}

func benchFit(b *testing.B, cold bool) {
	system, tools, history, current := benchInput()
	c := NewCounter("gpt-4o")
	budget := Budget(128, Balanced, 4096)
	if _, _, err := c.Fit(budget, system, tools, history, current); err != nil {
		b.Fatal(err)
	}
	tokens, size := 0, 0
	for _, m := range history {
		tokens += c.Message(m)
		size += len(m.Content)
		for _, tc := range m.ToolCalls {
			size += len(tc.Function.Arguments)
		}
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		if cold {
			c.cache.resetCache()
		}
		if _, _, err := c.Fit(budget, system, tools, history, current); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tokens), "history-tokens")
}

// BenchmarkFit200Messages fits a 200-message history with a warm cache, the
// steady state of an agent loop (target ≤ 2 ms/op).
func BenchmarkFit200Messages(b *testing.B) { benchFit(b, false) }

// BenchmarkFit200MessagesCold is the same with the cache emptied each time:
// every message is tokenized (the vocabulary is already loaded).
func BenchmarkFit200MessagesCold(b *testing.B) { benchFit(b, true) }

func BenchmarkText(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	inputs := map[string]string{
		"prose": sentence(r, 20000),
		"cli":   cliOutput(r, 2000),
		"ws":    strings.Repeat(" \t\n  \r\n", 1<<17/7),
	}
	for _, model := range []string{"gpt-4", "gpt-4o"} {
		c := NewCounter(model)
		for name, s := range inputs {
			b.Run(c.Encoding()+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					c.Text(s)
				}
			})
		}
	}
}
