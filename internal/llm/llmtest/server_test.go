package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// post sends a raw chat completion request and returns the response.
func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// dataLines reads a whole SSE body and returns the data payloads.
func dataLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		p, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("chunk %q: %v", s, err)
	}
	return m
}

func TestStreamFormatTextWithUsage(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply{Text: "Hello brave world", Usage: &Usage{PromptTokens: 7, CompletionTokens: 3}})
	resp := post(t, s, `{"model":"m1","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	lines := dataLines(t, resp.Body)
	// role, 3 words, finish, usage, [DONE]
	if len(lines) != 7 {
		t.Fatalf("got %d lines: %q", len(lines), lines)
	}
	if lines[6] != "[DONE]" {
		t.Fatalf("last line %q", lines[6])
	}
	first := decode(t, lines[0])
	for k, want := range map[string]any{"object": "chat.completion.chunk", "model": "m1", "system_fingerprint": "fp_llmtest"} {
		if first[k] != want {
			t.Errorf("%s = %v, want %v", k, first[k], want)
		}
	}
	if v, ok := first["usage"]; !ok || v != nil {
		t.Errorf("usage on a content chunk = %v (present %v), want null", v, ok)
	}
	ch := first["choices"].([]any)[0].(map[string]any)
	delta := ch["delta"].(map[string]any)
	if delta["role"] != "assistant" || delta["content"] != "" {
		t.Errorf("first delta %v", delta)
	}
	if v, ok := ch["finish_reason"]; !ok || v != nil {
		t.Errorf("finish_reason on first chunk = %v", v)
	}
	if v, ok := ch["logprobs"]; !ok || v != nil {
		t.Errorf("logprobs on first chunk = %v", v)
	}
	var got []string
	for _, l := range lines[1:4] {
		d := decode(t, l)["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
		got = append(got, d["content"].(string))
	}
	if want := []string{"Hello", " brave", " world"}; !reflect.DeepEqual(got, want) {
		t.Errorf("words %q, want %q", got, want)
	}
	fin := decode(t, lines[4])["choices"].([]any)[0].(map[string]any)
	if fin["finish_reason"] != "stop" || len(fin["delta"].(map[string]any)) != 0 {
		t.Errorf("final chunk %v", fin)
	}
	var u openai.ChatCompletionStreamResponse
	if err := json.Unmarshal([]byte(lines[5]), &u); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lines[5], `"choices":[]`) || u.Usage == nil ||
		u.Usage.PromptTokens != 7 || u.Usage.CompletionTokens != 3 || u.Usage.TotalTokens != 10 {
		t.Errorf("usage chunk %s", lines[5])
	}
	ids := map[string]bool{}
	for _, l := range lines[:6] {
		ids[decode(t, l)["id"].(string)] = true
	}
	if len(ids) != 1 {
		t.Errorf("chunk ids differ: %v", ids)
	}
}

func TestStreamWithoutIncludeUsageHasNoUsage(t *testing.T) {
	s := NewServer(t)
	resp := post(t, s, `{"model":"m1","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	lines := dataLines(t, resp.Body)
	for _, l := range lines {
		if strings.Contains(l, "usage") {
			t.Fatalf("usage sent without include_usage: %s", l)
		}
	}
	if got := len(lines); got != len(words(DefaultText))+3 {
		t.Fatalf("got %d lines", got)
	}
}

func TestStreamToolCallFragments(t *testing.T) {
	tests := []struct {
		name       string
		interleave bool
	}{{"sequential", false}, {"interleaved", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(t)
			s.Enqueue(Reply{Interleave: tt.interleave, ToolCalls: []ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_b", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`},
			}})
			resp := post(t, s, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`)
			lines := dataLines(t, resp.Body)
			var chunks []openai.ChatCompletionStreamResponse
			for _, l := range lines[:len(lines)-1] {
				var c openai.ChatCompletionStreamResponse
				if err := json.Unmarshal([]byte(l), &c); err != nil {
					t.Fatal(err)
				}
				chunks = append(chunks, c)
			}
			if d := chunks[0].Choices[0].Delta; d.Role != "assistant" || len(d.ToolCalls) != 1 || d.ToolCalls[0].ID != "call_a" {
				t.Fatalf("first chunk %s", lines[0])
			}
			if !strings.Contains(lines[0], `"content":null`) {
				t.Errorf("first tool chunk content should be null: %s", lines[0])
			}
			args := map[int]string{}
			order := []int{}
			for i, c := range chunks[:len(chunks)-1] {
				tc := c.Choices[0].Delta.ToolCalls[0]
				idx := *tc.Index
				order = append(order, idx)
				if tc.ID != "" {
					if tc.Function.Name == "" || tc.Type != "function" || tc.Function.Arguments != "" {
						t.Errorf("header fragment %d: %s", i, lines[i])
					}
				} else if tc.Function.Name != "" || tc.Type != "" {
					t.Errorf("argument fragment %d carries more than index+arguments: %s", i, lines[i])
				}
				args[idx] += tc.Function.Arguments
			}
			if args[0] != `{"city":"Paris"}` || args[1] != `{"tz":"Europe/Paris"}` {
				t.Errorf("arguments %v", args)
			}
			interleaved := false
			for i := 1; i < len(order); i++ {
				if order[i] < order[i-1] {
					interleaved = true
				}
			}
			if interleaved != tt.interleave {
				t.Errorf("index order %v, interleave %v", order, tt.interleave)
			}
			if fr := chunks[len(chunks)-1].Choices[0].FinishReason; fr != "tool_calls" {
				t.Errorf("finish reason %q", fr)
			}
		})
	}
}

func TestNonStreamedCompletion(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply{Text: "A short title", Usage: &Usage{PromptTokens: 12, CompletionTokens: 3}})
	resp := post(t, s, `{"model":"m2","messages":[{"role":"system","content":"title"}],"max_tokens":16,"stop":"\n","temperature":0.5}`)
	body, _ := io.ReadAll(resp.Body)
	var c openai.ChatCompletionResponse
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if c.Object != "chat.completion" || c.Model != "m2" || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content != "A short title" || c.Choices[0].FinishReason != "stop" ||
		c.Usage.PromptTokens != 12 || c.Usage.CompletionTokens != 3 || c.Usage.TotalTokens != 15 {
		t.Fatalf("completion %s", body)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Stream || r.MaxTokens != 16 || !reflect.DeepEqual(r.Stop, []string{"\n"}) ||
		r.Temperature == nil || *r.Temperature != 0.5 || r.Header.Get("Authorization") != "Bearer test-key" {
		t.Fatalf("recorded %+v", r)
	}
}

func TestErrorReply(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply{Status: 429, Header: http.Header{"Retry-After": {"2"}}})
	resp := post(t, s, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	var e openai.ErrorResponse
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == nil {
		t.Fatalf("error body: %v", err)
	}
	if e.Error.Code != "rate_limit_exceeded" || e.Error.Message == "" {
		t.Fatalf("error %+v", e.Error)
	}
}

func TestInvalidBodyIs400AndRecorded(t *testing.T) {
	s := NewServer(t)
	resp := post(t, s, `{"model":`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if r := s.Requests(); len(r) != 1 || r[0].DecodeError == "" {
		t.Fatalf("requests %+v", r)
	}
}

func TestHandlerAndQueueOrder(t *testing.T) {
	s := NewServer(t)
	s.SetHandler(func(r Request) Reply {
		if r.MaxTokens > 0 {
			return Reply{Text: "title"}
		}
		return Reply{Text: "chat"}
	})
	s.Enqueue(Reply{Text: "queued"})
	texts := []string{}
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":5}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}]}`,
	} {
		var c openai.ChatCompletionResponse
		if err := json.NewDecoder(post(t, s, body).Body).Decode(&c); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, c.Choices[0].Message.Content)
	}
	if want := []string{"queued", "title", "chat"}; !reflect.DeepEqual(texts, want) {
		t.Fatalf("got %q, want %q", texts, want)
	}
	if n := s.Requests(); len(n) != 3 || n[2].N != 3 {
		t.Fatalf("requests %+v", n)
	}
}

func TestUnknownPath(t *testing.T) {
	s := NewServer(t)
	resp, err := http.Get(s.BaseURL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestWordsAndFragments(t *testing.T) {
	wordTests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"one", []string{"one"}},
		{"Hello brave  world", []string{"Hello", " brave", "  world"}},
		{" lead\nline two ", []string{" lead", "\nline", " two "}},
	}
	for _, tt := range wordTests {
		if got := words(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	fragTests := []struct {
		in   string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"ééééé", 2, []string{"éé", "éé", "é"}},
	}
	for _, tt := range fragTests {
		if got := fragments(tt.in, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("fragments(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestResponseFormatLogprobsSeedCached(t *testing.T) {
	s := NewServer(t)
	post := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	schema := `{"type":"object","properties":{"city":{"type":"string","minLength":2},"n":{"type":"integer","minimum":3},"tags":{"type":"array","items":{"$ref":"#/$defs/tag"},"minItems":1},"kind":{"enum":["a","b"]}},"required":["city","n","tags","kind"],"additionalProperties":false,"$defs":{"tag":{"type":"boolean"}}}`
	out := post(`{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":7,"logprobs":true,"top_logprobs":2,` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":` + schema + `}}}`)
	choice := out["choices"].([]any)[0].(map[string]any)
	content := choice["message"].(map[string]any)["content"].(string)
	var got map[string]any
	if err := json.Unmarshal([]byte(content), &got); err != nil {
		t.Fatalf("content %q is not JSON: %v", content, err)
	}
	want := map[string]any{"city": "xx", "n": 3.0, "tags": []any{false}, "kind": "a"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("instance %v, want %v", got, want)
	}
	lp := choice["logprobs"].(map[string]any)["content"].([]any)
	first := lp[0].(map[string]any)
	if first["logprob"].(float64) != LogProb(7, 0, first["token"].(string)) || len(first["top_logprobs"].([]any)) != 2 {
		t.Fatalf("logprobs %v", first)
	}
	req := s.Requests()[0]
	if *req.Seed != 7 || !req.LogProbs || req.TopLogProbs != 2 || !req.WantsJSON() {
		t.Fatalf("recorded %+v", req)
	}

	// json_object, and the same conversation again: its prefix is cached.
	s.Enqueue(Reply{JSON: `{"ok":true}`})
	out = post(`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`)
	if c := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; c != `{"ok":true}` {
		t.Fatalf("content %v", c)
	}
	details := out["usage"].(map[string]any)["prompt_tokens_details"].(map[string]any)
	if details["cached_tokens"].(float64) != 5 {
		t.Fatalf("cached %v", details)
	}

	// top_logprobs without logprobs is refused with its param.
	out = post(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`)
	if e := out["error"].(map[string]any); e["param"] != "top_logprobs" {
		t.Fatalf("error %v", e)
	}
}

func TestStreamLogprobs(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply{Text: "one two", LogProbs: []float64{-0.5}})
	resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"logprobs":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var lps []float64
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Logprobs *struct {
					Content []struct {
						Token   string  `json:"token"`
						Logprob float64 `json:"logprob"`
					} `json:"content"`
				} `json:"logprobs"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) > 0 && c.Choices[0].Logprobs != nil {
			for _, l := range c.Choices[0].Logprobs.Content {
				lps = append(lps, l.Logprob)
			}
		}
	}
	if len(lps) != 2 || lps[0] != -0.5 || lps[1] != LogProb(0, 1, " two") {
		t.Fatalf("logprobs %v", lps)
	}
}

// The cached prefix is the longest run of leading messages an earlier
// request sent, never the request's own, compared field by field.
func TestCachedPrefix(t *testing.T) {
	s := NewServer(t)
	msg := func(role, content string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: role, Content: content}
	}
	sys, u1, a1, u2 := msg("system", "you are a lab assistant"), msg("user", "ping R1"), msg("assistant", "R1 answers"), msg("user", "and R2")
	call := openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
		Function: openai.FunctionCall{Name: "ping", Arguments: `{"host":"R1"}`}}}}
	callOther := call
	callOther.ToolCalls = []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "ping", Arguments: `{"host":"R2"}`}}}
	tokens := func(ms ...openai.ChatCompletionMessage) int {
		n := 0
		for _, m := range ms {
			n += messageTokens(m)
		}
		return n
	}
	s.record(Request{Messages: []openai.ChatCompletionMessage{sys, u1}})
	s.record(Request{Messages: []openai.ChatCompletionMessage{sys, u1, a1, u2}})
	s.record(Request{Messages: []openai.ChatCompletionMessage{sys, call}})
	cases := []struct {
		name string
		msgs []openai.ChatCompletionMessage
		want int
	}{
		{"the longest earlier prefix", []openai.ChatCompletionMessage{sys, u1, a1, u2, msg("assistant", "R2 too"), msg("user", "thanks")}, tokens(sys, u1, a1, u2)},
		{"a shorter one", []openai.ChatCompletionMessage{sys, u1, msg("assistant", "another answer")}, tokens(sys, u1)},
		{"the system prompt only", []openai.ChatCompletionMessage{sys, msg("user", "new question")}, tokens(sys)},
		{"nothing in common", []openai.ChatCompletionMessage{msg("system", "another prompt"), u1}, 0},
		{"a tool call with other arguments", []openai.ChatCompletionMessage{sys, callOther}, tokens(sys)},
		{"the same tool call", []openai.ChatCompletionMessage{sys, call, msg("tool", "reply")}, tokens(sys, call)},
	}
	for _, tc := range cases {
		req, _ := s.record(Request{Messages: tc.msgs})
		if got := s.cachedPrefix(req); got != tc.want {
			t.Errorf("%s: %d cached tokens, want %d", tc.name, got, tc.want)
		}
	}
	// A request's own messages are not an earlier request's.
	fresh := NewServer(t)
	req, _ := fresh.record(Request{Messages: []openai.ChatCompletionMessage{sys, u1}})
	if got := fresh.cachedPrefix(req); got != 0 {
		t.Errorf("first request: %d cached tokens, want 0", got)
	}
}
