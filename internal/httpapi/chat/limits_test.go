package chat_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// TestSessionLimit: a user at MAX_SESSIONS_PER_USER sessions is refused a
// new one with a 409 that says the limit and how to free room, before any
// streaming and without an LLM call; existing sessions go on.
func TestSessionLimit(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agentchat.db"), sqlite.WithLimits(store.Limits{SessionsPerUser: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnvOpts(t, 0, apitest.Options{Store: st}, nil, func(o *chat.Options) { o.Store = st })
	const first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	e.llm.Enqueue(llmtest.Reply{Text: "hello"}, llmtest.Reply{Text: "Greeting"})
	e.OpenStream("alice", path("/stream"), map[string]any{"message": "hi", "session_id": first}).All(t)

	r := e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "hi", "session_id": second})
	if r.Status != http.StatusConflict {
		t.Fatalf("second session: %d %s, want 409", r.Status, r.Body)
	}
	if msg := r.Message(); !strings.Contains(msg, "Limit reached") || !strings.Contains(msg, "1 chat sessions") || !strings.Contains(msg, "Delete a session") {
		t.Fatalf("message %q does not say the limit and how to free room", msg)
	}
	if _, err := st.GetSession(context.Background(), store.Key{ProjectID: project, UserID: "alice", ThreadID: second}); err == nil {
		t.Fatal("the refused session was stored")
	}
	// Without session_id (the server makes the id, and would create the
	// session beside the first LLM call): the same 409, before streaming.
	r = e.As("alice", http.MethodPost, path("/stream"), map[string]any{"message": "hi"})
	if r.Status != http.StatusConflict || !strings.Contains(r.Message(), "Limit reached") {
		t.Fatalf("new session without id: %d %s, want 409", r.Status, r.Body)
	}
	if list, _, err := st.ListSessions(context.Background(), project, "alice", store.Page{Limit: 10}); err != nil || len(list) != 1 {
		t.Fatalf("alice has %d sessions (%v), want 1", len(list), err)
	}
	// The existing session goes on; another user is not concerned.
	e.llm.Enqueue(llmtest.Reply{Text: "again"})
	e.OpenStream("alice", path("/stream"), map[string]any{"message": "more", "session_id": first}).All(t)
	e.llm.Enqueue(llmtest.Reply{Text: "hi bob"}, llmtest.Reply{Text: "Greeting"})
	e.OpenStream("bob", path("/stream"), map[string]any{"message": "hi", "session_id": second}).All(t)
}
