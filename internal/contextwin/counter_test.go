package contextwin

import (
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func TestEncodingForModel(t *testing.T) {
	tests := []struct{ model, want string }{
		{"gpt-4o", O200kBase},
		{"gpt-4o-mini", O200kBase},
		{"GPT-4o-2024-08-06", O200kBase},
		{"openai/gpt-4o", O200kBase},
		{"openrouter/openai/gpt-4.1-nano", O200kBase},
		{"gpt-4.1", O200kBase},
		{"gpt-5", O200kBase},
		{"gpt-5-mini", O200kBase},
		{"gpt-5.1-codex", O200kBase},
		{"o1", O200kBase},
		{"o1-preview", O200kBase},
		{"o3-mini", O200kBase},
		{"O4-MINI", O200kBase},
		{"ft:gpt-4o-mini:acme::abc123", O200kBase},
		{"chatgpt-4o-latest", O200kBase},
		{"  gpt-4o  ", O200kBase},
		{"gpt-4", Cl100kBase},
		{"gpt-4-turbo", Cl100kBase},
		{"gpt-3.5-turbo", Cl100kBase},
		{"ft:gpt-3.5-turbo:acme::x", Cl100kBase},
		{"claude-3-5-sonnet", Cl100kBase},
		{"anthropic/claude-sonnet-4", Cl100kBase},
		{"ollama/llama3.1", Cl100kBase},
		{"deepseek-chat", Cl100kBase},
		{"mistral-large", Cl100kBase},
		{"", Cl100kBase},
	}
	for _, tt := range tests {
		if got := EncodingForModel(tt.model); got != tt.want {
			t.Errorf("EncodingForModel(%q) = %q, want %q", tt.model, got, tt.want)
		}
		c := NewCounter(tt.model)
		if got := c.Encoding(); got != tt.want {
			t.Errorf("NewCounter(%q).Encoding() = %q, want %q", tt.model, got, tt.want)
		}
		if c.Model() != tt.model {
			t.Errorf("Model() = %q, want %q", c.Model(), tt.model)
		}
	}
}

// The expected counts are the reference tiktoken's (OpenAI's Rust
// implementation): "hello world" is 2 tokens and "tiktoken is great!" 6 in
// cl100k_base, as the openai-cookbook shows.
func TestText(t *testing.T) {
	tests := []struct {
		s            string
		cl100k, o200 int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"tiktoken is great!", 6, 6},
		{"antidisestablishmentarianism", 6, 6},
		{"The quick brown fox jumps over the lazy dog.", 10, 10},
		{"你好，世界", 6, 3},
		{`{"device":"R1","command":"show ip interface brief"}`, 13, 13},
		{"    indented\n\tcode();\n", 6, 6},
		{"🎉👍🏽", 9, 5},
		{"user", 1, 1},
		{"assistant", 1, 1},
		{"show_running_config", 3, 3},
		{"example_user", 2, 2},
	}
	cl, o2 := NewCounter("gpt-4"), NewCounter("gpt-4o")
	for _, tt := range tests {
		if got := cl.Text(tt.s); got != tt.cl100k {
			t.Errorf("cl100k_base Text(%q) = %d, want %d", tt.s, got, tt.cl100k)
		}
		if got := o2.Text(tt.s); got != tt.o200 {
			t.Errorf("o200k_base Text(%q) = %d, want %d", tt.s, got, tt.o200)
		}
	}
}

func TestTextOddInput(t *testing.T) {
	c := NewCounter("gpt-4o")
	// Invalid UTF-8 and special-token text are counted, not rejected.
	if n := c.Text("abc\xff\xfe def"); n <= 0 {
		t.Errorf("Text(invalid UTF-8) = %d", n)
	}
	if n := c.Text("<|endoftext|>"); n <= 1 {
		t.Errorf("Text(<|endoftext|>) = %d, want it counted as ordinary text", n)
	}
}

func TestMessage(t *testing.T) {
	const (
		args = `{"device":"R1","command":"show ip interface brief"}` // 13 tokens
		name = "show_running_config"                                 // 3 tokens
	)
	tests := []struct {
		desc string
		m    openai.ChatCompletionMessage
		want int
	}{
		{"user", openai.ChatCompletionMessage{Role: "user", Content: "hello world"}, 3 + 1 + 2},
		{"with name", openai.ChatCompletionMessage{Role: "user", Content: "hello world", Name: "example_user"}, 3 + 1 + 2 + 2 + 1},
		{"empty", openai.ChatCompletionMessage{Role: "assistant"}, 3 + 1},
		{"tool call", openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}},
		}}, 3 + 1 + TokensPerToolCall + 3 + 13},
		{"two tool calls and content", openai.ChatCompletionMessage{Role: "assistant", Content: "hello world", ToolCalls: []openai.ToolCall{
			{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}},
			{ID: "call_2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "user", Arguments: "{}"}},
		}}, 3 + 1 + 2 + (TokensPerToolCall + 3 + 13) + (TokensPerToolCall + 1 + 1)},
		{"tool result", openai.ChatCompletionMessage{Role: "tool", Content: "hello world", ToolCallID: "call_1"}, 3 + 1 + 2},
		{"legacy function call", openai.ChatCompletionMessage{Role: "assistant", FunctionCall: &openai.FunctionCall{Name: name, Arguments: args}}, 3 + 1 + TokensPerToolCall + 3 + 13},
		{"reasoning", openai.ChatCompletionMessage{Role: "assistant", Content: "user", ReasoningContent: "hello world"}, 3 + 1 + 1 + 2},
		{"parts", openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "hello world"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA"}},
		}}, 3 + 1 + 2 + TokensPerImage},
	}
	for _, enc := range []string{"gpt-4", "gpt-4o"} {
		c := NewCounter(enc)
		for _, tt := range tests {
			if got := c.Message(tt.m); got != tt.want {
				t.Errorf("%s %s: Message = %d, want %d", c.Encoding(), tt.desc, got, tt.want)
			}
			// Second call: from the cache, same value.
			if got := c.Message(tt.m); got != tt.want {
				t.Errorf("%s %s: cached Message = %d, want %d", c.Encoding(), tt.desc, got, tt.want)
			}
		}
	}
}

// The cache key covers every counted field: changing any of them changes the
// count as if uncached.
func TestMessageCacheKey(t *testing.T) {
	c := NewCounter("gpt-4o")
	base := openai.ChatCompletionMessage{Role: "assistant", Content: "a", ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: "f", Arguments: "{}"}}}}
	variants := []func(m *openai.ChatCompletionMessage){
		func(m *openai.ChatCompletionMessage) { m.Content = "a longer content than before" },
		func(m *openai.ChatCompletionMessage) { m.Name = "somebody" },
		func(m *openai.ChatCompletionMessage) { m.ReasoningContent = "thinking hard about it" },
		func(m *openai.ChatCompletionMessage) { m.Refusal = "I can't help with that" },
		func(m *openai.ChatCompletionMessage) {
			m.ToolCalls = []openai.ToolCall{{Function: openai.FunctionCall{Name: "f", Arguments: `{"device":"R1","x":[1,2,3]}`}}}
		},
		func(m *openai.ChatCompletionMessage) {
			m.ToolCalls = []openai.ToolCall{{Function: openai.FunctionCall{Name: "a_much_longer_function_name", Arguments: "{}"}}}
		},
		func(m *openai.ChatCompletionMessage) {
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{Function: openai.FunctionCall{Name: "g", Arguments: "{}"}})
		},
		// Moving text between fields keeps the strings but not the count.
		func(m *openai.ChatCompletionMessage) { m.Content, m.Name = "", "a" },
	}
	want0 := c.countMessage(&base)
	if got := c.Message(base); got != want0 {
		t.Fatalf("Message(base) = %d, want %d", got, want0)
	}
	for i, v := range variants {
		m := base
		m.ToolCalls = append([]openai.ToolCall(nil), base.ToolCalls...)
		v(&m)
		if got, want := c.Message(m), c.countMessage(&m); got != want {
			t.Errorf("variant %d: Message = %d, uncached count = %d", i, got, want)
		}
		if c.messageKey(&m) == c.messageKey(&base) {
			t.Errorf("variant %d: same cache key as base", i)
		}
	}
	// Fields that are not counted do not change the key.
	m := base
	m.ToolCallID = "call_9"
	m.ToolCalls = []openai.ToolCall{{ID: "call_x", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f", Arguments: "{}"}}}
	if c.messageKey(&m) != c.messageKey(&base) {
		t.Errorf("ids changed the cache key")
	}
}

func TestMessageCacheBounded(t *testing.T) {
	c := NewCounter("gpt-4")
	c.cache.resetCache()
	defer c.cache.resetCache()
	for i := range 3*cacheGeneration + 17 {
		c.Message(openai.ChatCompletionMessage{Role: "user", Content: "message " + strconv.Itoa(i)})
		if n := c.cache.cacheLen(); n > 2*cacheGeneration {
			t.Fatalf("cache holds %d entries, bound %d", n, 2*cacheGeneration)
		}
	}
	// A message in use survives the generation turnover.
	hot := openai.ChatCompletionMessage{Role: "user", Content: "hello world"}
	c.Message(hot)
	for i := range 2 * cacheGeneration {
		c.Message(openai.ChatCompletionMessage{Role: "user", Content: "filler " + strings.Repeat("y", i%5) + string(rune(0x4e00+i))})
		if i%1000 == 0 {
			c.Message(hot)
		}
	}
	if _, ok := c.cache.lookup(c.messageKey(&hot)); !ok {
		t.Errorf("hot message evicted")
	}
}

func TestCounterConcurrent(t *testing.T) {
	msgs := sampleHistory(rand.New(rand.NewPCG(3, 4)), 60)
	c := NewCounter("gpt-4o")
	c.cache.resetCache()
	want := make([]int, len(msgs))
	for i, m := range msgs {
		want[i] = c.countMessage(&m)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			cc := NewCounter("openai/gpt-4o-mini")
			for r := range 5 {
				for i := range msgs {
					j := (i + g*7 + r) % len(msgs)
					if got := cc.Message(msgs[j]); got != want[j] {
						errs <- "concurrent count differs"
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestTools(t *testing.T) {
	c := NewCounter("gpt-4o")
	if n := c.Tools(nil); n != 0 {
		t.Errorf("Tools(nil) = %d", n)
	}
	compact := `{"type":"object","properties":{"device":{"type":"string","description":"node name"}},"required":["device"]}`
	pretty := "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"device\": {\"type\": \"string\", \"description\": \"node name\"}\n  },\n  \"required\": [\"device\"]\n}"
	asMap := map[string]any{
		"type":       "object",
		"properties": map[string]any{"device": map[string]any{"type": "string", "description": "node name"}},
		"required":   []string{"device"},
	}
	tool := func(params any) openai.Tool {
		return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "show_running_config", Description: "hello world", Parameters: params}}
	}
	want := ToolsOverhead + TokensPerTool + 3 + 2 + c.Text(compact)
	for desc, p := range map[string]any{"compact raw": json.RawMessage(compact), "pretty raw": json.RawMessage(pretty), "map": asMap} {
		if got := c.Tools([]openai.Tool{tool(p)}); got != want {
			t.Errorf("%s: Tools = %d, want %d", desc, got, want)
		}
	}
	two := c.Tools([]openai.Tool{tool(json.RawMessage(compact)), tool(nil)})
	if want2 := want + TokensPerTool + 3 + 2; two != want2 {
		t.Errorf("two tools = %d, want %d", two, want2)
	}
	if got := c.Tools([]openai.Tool{tool(nil)}); got != ToolsOverhead+TokensPerTool+3+2 {
		t.Errorf("tool without parameters = %d", got)
	}
}

// Counts follow the openai-cookbook's published method: for the cookbook's
// message shapes (roles, contents, names) the total is 3 per message + 1 per
// name + the text of every value + 3 for the reply.
func TestRequiredMatchesPublishedMethod(t *testing.T) {
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "tiktoken is great!"},
		{Role: "system", Name: "example_user", Content: "hello world"},
		{Role: "user", Content: "The quick brown fox jumps over the lazy dog."},
	}
	// system(1)+6, system(1)+example_user(2)+1+hello world(2), user(1)+10
	want := 3*3 + (1 + 6) + (1 + 2 + 1 + 2) + (1 + 10) + 3
	for _, model := range []string{"gpt-4", "gpt-4o"} {
		c := NewCounter(model)
		if got := c.Required("", nil, msgs); got != want {
			t.Errorf("%s: Required = %d, want %d", model, got, want)
		}
	}
}

// The vocabularies are compiled in: the tokenizer's packages cannot reach the
// network at all (TestMain additionally runs every test with the network
// refused and checks nothing tried it).
func TestTokenizerHasNoNetworkDependency(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	cmd := exec.Command(goBin, "list", "-deps", "github.com/tiktoken-go/tokenizer/codec")
	cmd.Env = append(origEnv, "GOPROXY=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net" || strings.HasPrefix(dep, "net/") || dep == "os/exec" {
			t.Errorf("tokenizer depends on %s", dep)
		}
	}
}
