package chatfn_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/chatfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

func fixture(t *testing.T, name string, vars map[string]string) *lambdatest.Fixture {
	t.Helper()
	f, err := lambdaapp.Find(chatfn.Funcs(), name)
	if err != nil {
		t.Fatal(err)
	}
	return lambdatest.New(t, endpoint, f, vars)
}

type event struct {
	Type      string `json:"type"`
	Content   string `json:"content"`
	Error     string `json:"error"`
	SessionID string `json:"session_id"`
}

// readEvents reads SSE events until done (or the end of the stream).
func readEvents(t *testing.T, r *bufio.Reader) []event {
	t.Helper()
	var out []event
	for {
		line, err := r.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			var ev event
			if err := json.Unmarshal([]byte(d), &ev); err != nil {
				t.Fatalf("event %q: %v", d, err)
			}
			out = append(out, ev)
			if ev.Type == "done" {
				return out
			}
		}
		if err != nil {
			return out
		}
	}
}

func TestChatStream(t *testing.T) {
	llm := llmtest.NewServer(t)
	fx := fixture(t, "chat-stream", map[string]string{"OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "sk-test"})
	// A function URL has no routes: the function gets every path and
	// serves its route and the route's /v3/copilot alias.
	for _, target := range []string{"/v3/projects/p1/chat/stream", "/v3/copilot/projects/p1/chat/stream"} {
		llm.Enqueue(llmtest.Reply{Chunks: []string{"Hello", " from", " Lambda"}}, llmtest.Reply{Text: "Greeting"})
		sid := uuid.NewString()
		p, body, done := fx.OpenStream(http.MethodPost, target, fx.Auth("alice"), `{"message":"hi","session_id":"`+sid+`"}`)
		if p.StatusCode != http.StatusOK || p.Headers["Content-Type"] != "text/event-stream" || p.Headers["X-Session-Id"] != sid {
			done()
			t.Fatalf("%s: prelude %+v", target, p)
		}
		evs := readEvents(t, bufio.NewReader(body))
		done()
		var text strings.Builder
		for _, ev := range evs {
			if ev.SessionID != sid {
				t.Errorf("event %+v of another session", ev)
			}
			if ev.Type == "error" {
				t.Errorf("error event %+v", ev)
			}
			if ev.Type == "content" {
				text.WriteString(ev.Content)
			}
		}
		if len(evs) == 0 || evs[len(evs)-1].Type != "done" || text.String() != "Hello from Lambda" {
			t.Fatalf("%s: events %+v", target, evs)
		}
		msgs, err := fx.Store.ListMessages(context.Background(), store.Key{ProjectID: "p1", UserID: "alice", ThreadID: sid}, 0)
		if err != nil || len(msgs) != 2 || msgs[1].Content != "Hello from Lambda" {
			t.Fatalf("stored messages %+v, %v", msgs, err)
		}
	}

	resp := fx.Stream(http.MethodPost, "/v3/projects/p1/chat/stream", fx.Auth("alice"), `{}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), "message") {
		t.Fatalf("request without message: %d %s", resp.StatusCode, resp.Body)
	}
	resp = fx.Stream(http.MethodGet, "/v3/projects/p1/chat/sessions", fx.Auth("alice"), "")
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("a route chat-stream does not serve: %d %s", resp.StatusCode, resp.Body)
	}
}
