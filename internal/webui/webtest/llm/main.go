// Command llm is the scripted OpenAI-compatible LLM of the web console's
// browser tests (web/test): it runs as its own process, listens on a free
// loopback port and prints "listening on http://ADDR" on stdout.
//
// The answer depends on the last user message (see script): a Markdown
// answer streamed word by word, a tool call whose arguments arrive in
// fragments, a slow answer to abort, a long answer (many chunks, to cut,
// reload or watch from a second tab while it streams), an upstream error,
// or a quick reply. A request whose last message is a tool result gets a
// closing answer (the long answer when the user asked for a long one); a
// request that is not streamed (the session title) gets a short title.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	delay := flag.Duration("delay", 40*time.Millisecond, "pause between two chunks of a normal answer")
	slow := flag.Duration("slow", 1500*time.Millisecond, "pause between two chunks of a slow answer")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "llm:", err)
		os.Exit(1)
	}
	s := &server{delay: *delay, slow: *slow}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "llm:", err)
		os.Exit(1)
	}
}

type server struct {
	delay, slow time.Duration
	seq         atomic.Int64
}

type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type request struct {
	Model         string    `json:"model"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// reply is a scripted answer: content chunks, then tool calls.
type reply struct {
	chunks []string
	tool   *toolCall
	pause  time.Duration
	status int // an HTTP error instead of an answer
}

type toolCall struct {
	name      string
	fragments []string
}

// Markdown is the answer to an ordinary message: every kind of block the
// page renders, and markup the sanitizer must neutralize.
const markdown = "## Your lab\n\nThe **copilot** answers in *Markdown*:\n\n" +
	"- a list item with `inline code`\n- a second item\n\n" +
	"```\nshow ip interface brief\n```\n\n" +
	"| node | status |\n|---|---|\n| R1 | started |\n\n" +
	"<img src=x onerror=\"window.__xss=1\"> [a bad link](javascript:window.__xss=2) " +
	"![remote image](http://203.0.113.9/pixel.png) [docs](https://docs.gns3.com/) done."

// longWords is the number of words of the long answer.
const longWords = 160

// longAnswer is "Long answer: w1 w2 … w160 end.", one chunk a word: the
// browser tests build the same text to compare with what the page shows.
func longAnswer() string {
	var b strings.Builder
	b.WriteString("Long answer:")
	for i := 1; i <= longWords; i++ {
		fmt.Fprintf(&b, " w%d", i)
	}
	b.WriteString(" end.")
	return b.String()
}

// lastUser is the text of the last user message, lowercased.
func lastUser(req *request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return strings.ToLower(contentText(req.Messages[i].Content))
		}
	}
	return ""
}

func (s *server) script(req *request) reply {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		if strings.Contains(lastUser(req), "long") {
			return reply{chunks: words(longAnswer()), pause: s.delay}
		}
		return reply{chunks: words("The tool answered. **GNS3** is not reachable from here, so nothing changed in the lab."), pause: s.delay}
	}
	text := strings.ToLower(contentText(last.Content))
	switch {
	case strings.Contains(text, "tool"):
		args := `{"nodes":[{"template":"VPCS","name":"PC1"},{"template":"VPCS","name":"PC2"}]}`
		return reply{chunks: words("Let me add two nodes."), pause: 80 * time.Millisecond,
			tool: &toolCall{name: "create_gns3_node", fragments: pieces(args, 8)}}
	case strings.Contains(text, "slow"):
		return reply{chunks: words(strings.Repeat("slowly ", 60)), pause: s.slow}
	case strings.Contains(text, "long"):
		return reply{chunks: words(longAnswer()), pause: s.delay}
	case strings.Contains(text, "fail"):
		return reply{status: http.StatusInternalServerError}
	case strings.Contains(text, "quick"):
		return reply{chunks: words("Quick answer.")}
	}
	return reply{chunks: words(markdown), pause: s.delay}
}

func contentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				t, _ := m["text"].(string)
				b.WriteString(t)
			}
		}
		return b.String()
	}
	return ""
}

func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid request")
		return
	}
	n := s.seq.Add(1)
	id := fmt.Sprintf("chatcmpl-web%06d", n)
	if !req.Stream {
		// The session title.
		title := "Chat about " + firstWords(titleSource(contentText(req.Messages[len(req.Messages)-1].Content)), 3)
		writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": title}}},
			"usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
		})
		return
	}
	rp := s.script(&req)
	if rp.status != 0 {
		writeError(w, rp.status, "The scripted LLM failed on purpose.")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(delta any, finish any) bool {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": req.Model, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	wait := func() bool {
		select {
		case <-time.After(rp.pause):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for _, c := range rp.chunks {
		if !wait() || !send(map[string]any{"content": c}, nil) {
			return
		}
	}
	finish := "stop"
	if tc := rp.tool; tc != nil {
		finish = "tool_calls"
		callID := fmt.Sprintf("call_web%d", n)
		head := map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID, "type": "function",
			"function": map[string]any{"name": tc.name, "arguments": ""}}}}
		if !wait() || !send(head, nil) {
			return
		}
		for _, f := range tc.fragments {
			part := map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": f}}}}
			if !wait() || !send(part, nil) {
				return
			}
		}
	}
	if !send(map[string]any{}, finish) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": req.Model, "choices": []any{},
			"usage": map[string]int{"prompt_tokens": 50, "completion_tokens": len(rp.chunks) + 1, "total_tokens": 51 + len(rp.chunks)}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// words splits text into chunks of one word each, the spaces before a word
// going with it.
func words(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if (text[i] == ' ' || text[i] == '\n') && text[i-1] != ' ' && text[i-1] != '\n' {
			out = append(out, text[start:i])
			start = i
		}
	}
	return append(out, text[start:])
}

// pieces splits s into pieces of n bytes (s is ASCII).
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// titleSource is the user's line of a title prompt ("User: ..."), else s.
func titleSource(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "User:"); ok {
			return rest
		}
	}
	return s
}

func firstWords(s string, n int) string {
	var f []string
	for _, w := range strings.Fields(s) {
		if !strings.HasSuffix(w, ":") { // "User:" in the title prompt
			f = append(f, w)
		}
	}
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}})
}
