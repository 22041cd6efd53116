package localserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/sse/ssetest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// multitaskLab is two server processes on one store and an LLM that
// answers "first" slowly (60 tokens), other messages at once, and titles.
type multitaskLab struct {
	t          *testing.T
	urlA, urlB string
	token      string
	first      []string
}

func newMultitaskLab(t *testing.T, kind string) *multitaskLab {
	t.Helper()
	v, err := auth.NewJWTVerifier([]byte(copilotSecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	l := &multitaskLab{t: t}
	l.token, _ = v.Issue("alice", time.Hour)
	for i := range 60 {
		l.first = append(l.first, fmt.Sprintf("f%d ", i+1))
	}
	llm := llmtest.NewServer(t)
	llm.SetHandler(func(req llmtest.Request) llmtest.Reply {
		if !req.Stream {
			return llmtest.Reply{Text: "Title"}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "user" && last.Content == "first" {
			return llmtest.Reply{Chunks: l.first, ChunkDelay: 40 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer to " + last.Content}
	})
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": copilotSecret,
		"OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "sk-test-llm-key", "OPENAI_MODEL": "test-model",
	}
	if kind == "dynamodb" {
		vars["STORE"], vars["TABLE_NAME"] = "dynamodb", "multitask-"+uuid.NewString()
		vars["DYNAMODB_ENDPOINT"], vars["AWS_REGION"] = dynalitetest.Start(t), "us-east-1"
	}
	l.urlA, _, _, _ = start(t, vars)
	l.urlB = startChild(t, buildLocalServer(t), vars).url // another process
	return l
}

// post sends a chat message on url and returns the response.
func (l *multitaskLab) post(url, path string, body map[string]any) *http.Response {
	l.t.Helper()
	return authed(l.t, l.token, http.MethodPost, url+path, body)
}

// get reads url+path as JSON into v.
func (l *multitaskLab) get(url, path string, v any) {
	l.t.Helper()
	resp := authed(l.t, l.token, http.MethodGet, url+path, nil)
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		l.t.Fatalf("GET %s: %v", path, err)
	}
}

// eventTypes reads the rest of an SSE body and returns its events' types
// and their content.
func eventTypes(body io.Reader) (types []string, content string) {
	for _, f := range ssetest.ReadFrames(body, nil) {
		typ, c := f.Event()
		types = append(types, typ)
		content += c
	}
	return types, content
}

// readUntilContent reads SSE lines of body until the first content event.
func readUntilContent(body io.Reader) []ssetest.Frame {
	return ssetest.ReadFrames(body, func(fs []ssetest.Frame) bool {
		typ, _ := fs[len(fs)-1].Event()
		return typ == "content"
	})
}

// TestMultitaskStrategies: a message sent on instance B while instance A
// answers the same session, with each multitask_strategy, on SQLite and
// DynamoDB; history and statistics are exact afterwards.
func TestMultitaskStrategies(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "dynamodb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			l := newMultitaskLab(t, kind)
			project := uuid.NewString()
			chat := "/v3/projects/" + project + "/chat"
			type history struct {
				Messages []struct {
					Role, Content string
					Metadata      map[string]any
				} `json:"messages"`
			}
			type session struct {
				ThreadID     string         `json:"thread_id"`
				MessageCount int64          `json:"message_count"`
				Stats        map[string]any `json:"stats"`
			}
			check := func(t *testing.T, sid string, wantRoles, wantLast string, turns, aborted int) {
				t.Helper()
				var h history
				l.get(l.urlA, chat+"/sessions/"+sid+"/history", &h)
				var roles []string
				for _, m := range h.Messages {
					roles = append(roles, m.Role)
				}
				if strings.Join(roles, ",") != wantRoles || h.Messages[len(h.Messages)-1].Content != wantLast {
					t.Fatalf("history %+v, want roles %s ending %q", h.Messages, wantRoles, wantLast)
				}
				var list []session
				l.get(l.urlB, chat+"/sessions", &list)
				for _, s := range list {
					if s.ThreadID == sid {
						if s.MessageCount != int64(len(h.Messages)) || fmt.Sprint(s.Stats["turns"]) != fmt.Sprint(turns) || fmt.Sprint(s.Stats["aborted_turns"]) != fmt.Sprint(aborted) {
							t.Fatalf("session %+v, want %d messages, %d turns, %d aborted", s, len(h.Messages), turns, aborted)
						}
						return
					}
				}
				t.Fatalf("session %s not listed", sid)
			}
			startFirst := func(t *testing.T) (string, *http.Response) {
				sid := uuid.NewString()
				a := l.post(l.urlA, chat+"/stream", map[string]any{"message": "first", "session_id": sid})
				if a.StatusCode != http.StatusOK {
					t.Fatalf("first: %d", a.StatusCode)
				}
				readUntilContent(a.Body)
				return sid, a
			}

			t.Run("reject", func(t *testing.T) {
				sid, a := startFirst(t)
				for _, strategy := range []string{"", "reject"} {
					b := l.post(l.urlB, chat+"/stream", map[string]any{"message": "second", "session_id": sid, "multitask_strategy": strategy})
					if b.StatusCode != http.StatusConflict || b.Header.Get("Retry-After") == "" {
						t.Fatalf("strategy %q: status %d, Retry-After %q", strategy, b.StatusCode, b.Header.Get("Retry-After"))
					}
				}
				types, _ := eventTypes(a.Body)
				if types[len(types)-1] != "done" {
					t.Fatalf("first stream: %v", types)
				}
				check(t, sid, "user,assistant", strings.Join(l.first, ""), 1, 0)
			})

			t.Run("enqueue", func(t *testing.T) {
				sid, a := startFirst(t)
				b := l.post(l.urlB, chat+"/stream", map[string]any{"message": "second", "session_id": sid, "multitask_strategy": "enqueue"})
				if b.StatusCode != http.StatusOK {
					t.Fatalf("enqueue: %d", b.StatusCode)
				}
				queued, _ := readUntilQueued(b.Body)
				if !queued {
					t.Fatal("the queued message's stream did not say queued first")
				}
				c := l.post(l.urlA, chat+"/stream", map[string]any{"message": "third", "session_id": sid, "multitask_strategy": "enqueue"})
				if c.StatusCode != http.StatusConflict {
					t.Fatalf("a second queued message: status %d, want 409", c.StatusCode)
				}
				types, content := eventTypes(b.Body)
				if types[len(types)-1] != "done" || content != "answer to second" {
					t.Fatalf("queued stream: %v %q", types, content)
				}
				if types, _ := eventTypes(a.Body); types[len(types)-1] != "done" {
					t.Fatalf("first stream: %v", types)
				}
				check(t, sid, "user,assistant,user,assistant", "answer to second", 2, 0)
			})

			for _, strategy := range []string{"interrupt", "rollback"} {
				t.Run(strategy, func(t *testing.T) {
					sid, a := startFirst(t)
					b := l.post(l.urlB, chat+"/stream", map[string]any{"message": "second", "session_id": sid, "multitask_strategy": strategy})
					if b.StatusCode != http.StatusOK {
						t.Fatalf("%s: %d", strategy, b.StatusCode)
					}
					types, content := eventTypes(b.Body)
					if types[len(types)-1] != "done" || content != "answer to second" {
						t.Fatalf("%s stream: %v %q", strategy, types, content)
					}
					firstTypes, firstContent := eventTypes(a.Body)
					if firstTypes[len(firstTypes)-1] != "done" || firstContent == strings.Join(l.first, "")[len("f1 "):] {
						t.Fatalf("the interrupted stream: %v (%d bytes of content)", firstTypes, len(firstContent))
					}
					if strategy == "rollback" {
						// The rolled-back turn is counted (aborted): its
						// LLM calls were made; its messages are gone.
						check(t, sid, "user,assistant", "answer to second", 2, 1)
						return
					}
					var h history
					l.get(l.urlA, chat+"/sessions/"+sid+"/history", &h)
					if h.Messages[0].Content != "first" {
						t.Fatalf("interrupt lost the first message: %+v", h.Messages)
					}
					roles := "user,user,assistant"
					if len(h.Messages) == 4 {
						roles = "user,assistant,user,assistant" // the cut answer is kept
					}
					check(t, sid, roles, "answer to second", 2, 1)
				})
			}
		})
	}
}

// readUntilQueued reads the first event of body and reports whether it
// is "queued".
func readUntilQueued(body io.Reader) (bool, []byte) {
	buf := make([]byte, 0, 256)
	one := make([]byte, 1)
	for {
		if _, err := body.Read(one); err != nil {
			return false, buf
		}
		buf = append(buf, one[0])
		if bytes.HasSuffix(buf, []byte("\n\n")) && bytes.Contains(buf, []byte("data: ")) {
			return bytes.Contains(buf, []byte(`"type":"queued"`)), buf
		}
	}
}
