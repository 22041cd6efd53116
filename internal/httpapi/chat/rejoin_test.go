package chat_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/sse/ssetest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// newLoggedEnv is newEnv with the turn log on, and mods applied to the
// chat options.
func newLoggedEnv(t *testing.T, mods ...func(*chat.Options)) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return newEnvOpts(t, 0, apitest.Options{Store: st}, nil, append([]func(*chat.Options){func(o *chat.Options) { o.TurnLogs = st }}, mods...)...)
}

// do sends a request as user with headers and returns the response.
func do(t *testing.T, e *env, method, path, user string, body any, header ...string) *http.Response {
	t.Helper()
	return apitest.OpenURL(t, method, e.Server.URL+path, e.Token(user), body, header...)
}

func words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d ", i+1)
	}
	return out
}

// TestRejoinReplaysAndFollows: a client cut after 20 of 200 tokens comes
// back with Last-Event-ID (or ?after=) and gets exactly the rest; what it
// got before and after the cut is, byte for byte, what a client that was
// never cut gets; the turn went on without its client and was stored
// whole.
func TestRejoinReplaysAndFollows(t *testing.T) {
	e := newLoggedEnv(t)
	e.llm.Enqueue(llmtest.Reply{Chunks: words(200), ChunkDelay: 2 * time.Millisecond}, llmtest.Reply{Text: "Title"})
	sid := uuid.NewString()
	resp := do(t, e, http.MethodPost, path("/stream"), "alice", map[string]any{"message": "count", "session_id": sid})
	contents := 0
	cut := ssetest.ReadFrames(resp.Body, func(fs []ssetest.Frame) bool {
		if typ, _ := fs[len(fs)-1].Event(); typ == "content" {
			contents++
		}
		return contents == 20
	})
	resp.Body.Close() // the network drops

	last := cut[len(cut)-1].ID
	for _, how := range []string{"header", "query"} {
		var rest []ssetest.Frame
		if how == "header" {
			rest = ssetest.ReadFrames(do(t, e, http.MethodGet, path("/sessions/"+sid+"/stream"), "alice", nil, "Last-Event-ID", last).Body, nil)
		} else {
			rest = ssetest.ReadFrames(do(t, e, http.MethodGet, path("/sessions/"+sid+"/stream?after="+last), "alice", nil).Body, nil)
		}
		if got, n := ssetest.Content(rest); got != strings.Join(words(200)[20:], "") {
			t.Fatalf("%s: the rest has %d tokens: %.40q...", how, n, got)
		}
		if len(rest) == 0 || !strings.Contains(rest[len(rest)-1].Raw, `"type":"done"`) {
			t.Fatalf("%s: the rest does not end with done", how)
		}
		// A second tab that was there from the start: the same bytes.
		wresp := do(t, e, http.MethodGet, path("/sessions/"+sid+"/stream"), "alice", nil)
		if turn, _, _ := strings.Cut(last, ":"); wresp.Header.Get("X-Turn-Id") != turn {
			t.Fatalf("X-Turn-Id %q, want %q", wresp.Header.Get("X-Turn-Id"), turn)
		}
		whole := ssetest.ReadFrames(wresp.Body, nil)
		if ssetest.Joined(cut)+ssetest.Joined(rest) != ssetest.Joined(whole) {
			t.Fatalf("%s: cut + rest differ from the whole stream:\n%s\n---\n%s", how, ssetest.Joined(cut)+ssetest.Joined(rest), ssetest.Joined(whole))
		}
	}
	// The turn is over: a page asking for a running turn gets none.
	if resp := do(t, e, http.MethodGet, path("/sessions/"+sid+"/stream?running=true"), "alice", nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("running=true after the turn: status %d", resp.StatusCode)
	}
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: sid}
	sess, err := e.Store.GetSession(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := e.Store.ListMessages(context.Background(), k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Stats.Turns != 1 || sess.Stats.AbortedTurns != 0 || len(msgs) != 2 || msgs[1].Content != strings.Join(words(200), "") {
		t.Fatalf("the turn did not go on without its client: stats %+v, %d messages", sess.Stats, len(msgs))
	}
}

// TestRejoinRefusals: no log 204, another user's or a missing session
// 404, a bad id 400, a bad session id 422, a bad on_disconnect 422.
func TestRejoinRefusals(t *testing.T) {
	// An unknown turn is waited for (readNamed): not long here.
	e := newLoggedEnv(t, func(o *chat.Options) { o.Follow.Grace = 100 * time.Millisecond })
	sid := uuid.NewString()
	if err := e.Store.CreateSession(context.Background(), &store.Session{ProjectID: project, UserID: "alice", ThreadID: sid}); err != nil {
		t.Fatal(err)
	}
	rejoin := path("/sessions/" + sid + "/stream")
	turn := uuid.Must(uuid.NewV7()).String()
	cases := []struct {
		name, user, path string
		header           []string
		status           int
	}{
		{"no log", "alice", rejoin, nil, http.StatusNoContent},
		{"unknown turn", "alice", rejoin, []string{"Last-Event-ID", turn + ":3"}, http.StatusNoContent},
		{"another user", "bob", rejoin, nil, http.StatusNotFound},
		{"missing session", "alice", path("/sessions/" + uuid.NewString() + "/stream"), nil, http.StatusNotFound},
		{"bad session id", "alice", path("/sessions/x/stream"), nil, http.StatusUnprocessableEntity},
		{"id without number", "alice", rejoin, []string{"Last-Event-ID", turn}, http.StatusBadRequest},
		{"id not a turn", "alice", rejoin, []string{"Last-Event-ID", "abc:1"}, http.StatusBadRequest},
		{"negative number", "alice", rejoin, []string{"Last-Event-ID", turn + ":-1"}, http.StatusBadRequest},
		{"not a number", "alice", rejoin, []string{"Last-Event-ID", turn + ":1e3"}, http.StatusBadRequest},
		{"bad after", "alice", rejoin + "?after=1", nil, http.StatusBadRequest},
		{"bad running", "alice", rejoin + "?running=yes", nil, http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, e, http.MethodGet, tc.path, tc.user, nil, tc.header...)
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tc.status)
			}
		})
	}
	resp := do(t, e, http.MethodPost, path("/stream"), "alice", map[string]any{"message": "hi", "on_disconnect": "later"})
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("on_disconnect later: status %d", resp.StatusCode)
	}
}

// TestOnDisconnect: with the log on, a turn whose client leaves goes on
// to its end; with "on_disconnect": "cancel" it stops as before.
func TestOnDisconnect(t *testing.T) {
	for _, tc := range []struct {
		value   string
		aborted int64
	}{{"", 0}, {"continue", 0}, {"cancel", 1}} {
		t.Run("on_disconnect="+tc.value, func(t *testing.T) {
			e := newLoggedEnv(t)
			e.llm.Enqueue(llmtest.Reply{Chunks: words(100), ChunkDelay: 3 * time.Millisecond}, llmtest.Reply{Text: "Title"})
			sid := uuid.NewString()
			body := map[string]any{"message": "count", "session_id": sid}
			if tc.value != "" {
				body["on_disconnect"] = tc.value
			}
			resp := do(t, e, http.MethodPost, path("/stream"), "alice", body)
			ssetest.ReadFrames(resp.Body, func(fs []ssetest.Frame) bool { return len(fs) == 5 })
			resp.Body.Close()
			k := store.Key{ProjectID: project, UserID: "alice", ThreadID: sid}
			deadline := time.Now().Add(10 * time.Second)
			for {
				sess, err := e.Store.GetSession(context.Background(), k)
				if err == nil && sess.Stats.Turns+sess.Stats.AbortedTurns > 0 {
					if sess.Stats.AbortedTurns != tc.aborted {
						t.Fatalf("stats %+v, want %d aborted", sess.Stats, tc.aborted)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the turn did not end: %+v %v", sess, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestRejoinWaitsForTheLastBatch: a client that names a turn the store
// does not know yet (its last batch is being written, its lease already
// released) gets the rest once it is written, not a 204.
func TestRejoinWaitsForTheLastBatch(t *testing.T) {
	e := newLoggedEnv(t)
	sid := uuid.NewString()
	k := store.Key{ProjectID: project, UserID: "alice", ThreadID: sid}
	if err := e.Store.CreateSession(context.Background(), &store.Session{ProjectID: project, UserID: "alice", ThreadID: sid}); err != nil {
		t.Fatal(err)
	}
	turn := uuid.Must(uuid.NewV7()).String()
	written := make(chan error, 1)
	time.AfterFunc(100*time.Millisecond, func() {
		written <- e.Store.AppendTurnEvents(context.Background(), k, store.TurnEvents{Turn: turn, First: 1,
			Events: [][]byte{[]byte(`{"type":"content","content":"a"}`), []byte(`{"type":"content","content":"b"}`), []byte(`{"type":"done"}`)}, Final: true}, time.Hour)
	})
	resp := do(t, e, http.MethodGet, path("/sessions/"+sid+"/stream"), "alice", nil, "Last-Event-ID", turn+":1")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200 once the batch is written", resp.StatusCode)
	}
	fs := ssetest.ReadFrames(resp.Body, nil)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].ID != turn+":2" || fs[1].ID != turn+":3" {
		t.Fatalf("frames %+v, want events 2 and 3", fs)
	}
}
