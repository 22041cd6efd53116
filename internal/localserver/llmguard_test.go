package localserver

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/syncbuf"

	"github.com/google/uuid"
)

// The per-user LLM configurations of issue 20 through the local server in
// multi-user (JWT) mode: a base URL aiming at the server's own network
// makes no connection there, and a 150 MB answer is cut at the cap, stored
// as interrupted, without holding it in memory.

// guardVictim is a listener on 127.0.0.2 that must see no connection; it
// counts what it accepts.
type guardVictim struct {
	ln   net.Listener
	mu   sync.Mutex
	seen int
}

func listenGuardVictim(t *testing.T) *guardVictim {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("127.0.0.2 cannot be bound here: %v", err)
	}
	v := &guardVictim{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			v.mu.Lock()
			v.seen++
			v.mu.Unlock()
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return v
}

func (v *guardVictim) port() string {
	_, p, _ := net.SplitHostPort(v.ln.Addr().String())
	return p
}

// count returns the connections accepted so far; its own sentinel
// connection, accepted after any earlier one, is not counted.
func (v *guardVictim) count(t *testing.T) int {
	t.Helper()
	v.mu.Lock()
	before := v.seen
	v.mu.Unlock()
	c, err := net.Dial("tcp", v.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		v.mu.Lock()
		n := v.seen
		v.mu.Unlock()
		if n > before {
			return n - 1
		}
	}
	t.Fatal("the sentinel connection was never accepted")
	return 0
}

// hugeModel streams an answer of 150 MB, generated as it is written, and
// counts the bytes it could write and the max_tokens it was asked for.
func hugeModel(t *testing.T) (*httptest.Server, *int64, *int) {
	t.Helper()
	var mu sync.Mutex
	var written int64
	var maxTokens int
	chunk := []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("y", 32<<10) + `"}}]}` + "\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		maxTokens = req.MaxTokens
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		var n int64
		for n < 150<<20 {
			k, err := w.Write(chunk)
			n += int64(k)
			if err != nil {
				break
			}
		}
		mu.Lock()
		written = n
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, &written, &maxTokens
}

func TestUserLLMGuardAndAnswerCapEndToEnd(t *testing.T) {
	victim := listenGuardVictim(t)
	model, written, maxTokens := hugeModel(t)
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": cfgSecret, "ENCRYPTION_KEY": newKeyB64(t),
		// The scripted model's address; the victim's is not in it.
		"LLM_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32",
	}
	url, _, _, _ := start(t, vars)
	v, _ := auth.NewJWTVerifier([]byte(cfgSecret), time.Now)
	tok, _ := v.Issue("alice", time.Hour)
	alice := user{t: t, url: url, token: tok, bodies: &syncbuf.Buffer{}}
	use := func(baseURL string) {
		t.Helper()
		st, out := alice.do(http.MethodPost, "/v3/access/users/me/llm-model-configs", map[string]any{
			"name": "model " + uuid.NewString()[:8], "model_type": "text", "is_default": true,
			"config": map[string]any{"provider": "openai", "base_url": baseURL, "model": "m", "context_limit": 128, "max_tokens": 777, "api_key": "sk-alice-0123456789"},
		})
		if st != http.StatusCreated {
			t.Fatalf("create %s: %d %v", baseURL, st, out)
		}
	}

	// The attack: no connection to the victim, a clear error.
	p := victim.port()
	for _, base := range []string{
		"http://127.0.0.2:" + p + "/v1",
		"http://0x7f000002:" + p + "/v1",
		"http://2130706434:" + p + "/v1",
		"http://127.2:" + p + "/v1",
		"http://[::ffff:127.0.0.2]:" + p + "/v1",
		"http://169.254.169.254/latest",
		"http://10.0.0.5/v1",
	} {
		use(base)
		st, out := alice.chat("hi")
		if msg, _ := out["message"].(string); st < 400 || st >= 500 || !strings.Contains(msg, "LLM_ALLOW_PRIVATE_HOSTS") {
			t.Fatalf("%s: %d %v, want a 4xx naming LLM_ALLOW_PRIVATE_HOSTS", base, st, out)
		}
	}
	if n := victim.count(t); n != 0 {
		t.Fatalf("the victim accepted %d connections", n)
	}

	// A 150 MB answer: cut at the cap (1 MiB), an error saying so, the
	// message stored as interrupted at the cap.
	use(model.URL + "/v1")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sid := uuid.NewString()
	st, body := sendJSON(t, url, tok, http.MethodPost, "/v3/projects/"+project+"/chat/stream",
		map[string]any{"message": "write a lot", "session_id": sid, "stream": false})
	runtime.ReadMemStats(&after)
	var reply struct {
		Content string `json:"content"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal(body, &reply); err != nil || st != http.StatusOK {
		t.Fatalf("turn: %d %.300s", st, body)
	}
	if len(reply.Content) > 1<<20 || len(reply.Content) < 1<<19 || !strings.Contains(reply.Error, "LLM_MAX_ANSWER_BYTES") {
		t.Fatalf("answer of %d bytes, error %q", len(reply.Content), reply.Error)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the turn allocated %d MiB; answer %d bytes; error %q", alloc>>20, len(reply.Content), reply.Error)
	if alloc > 100<<20 {
		t.Fatalf("the turn allocated %d MiB", alloc>>20)
	}
	model.Close() // waits for the handler
	if *written > 50<<20 {
		t.Fatalf("the model could write %d MiB", *written>>20)
	}
	if *maxTokens != 777 {
		t.Fatalf("the model was asked for max_tokens %d, want the configuration's 777", *maxTokens)
	}
	st, hist := sendJSON(t, url, tok, http.MethodGet, "/v3/projects/"+project+"/chat/sessions/"+sid+"/history", nil)
	var h struct {
		Messages []struct {
			Role     string         `json:"role"`
			Content  string         `json:"content"`
			Metadata map[string]any `json:"metadata"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(hist, &h); err != nil || st != http.StatusOK {
		t.Fatalf("history: %d %.300s", st, hist)
	}
	found := false
	for _, m := range h.Messages {
		if m.Role != "assistant" {
			continue
		}
		found = true
		if len(m.Content) > 1<<20 || m.Content != reply.Content || m.Metadata["interrupted"] != true {
			t.Fatalf("stored answer of %d bytes, metadata %v", len(m.Content), m.Metadata)
		}
	}
	if !found {
		t.Fatalf("no assistant message stored: %.300s", hist)
	}
}
