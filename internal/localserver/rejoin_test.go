package localserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/sse/ssetest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// TestRejoinAcrossInstances is the acceptance of issue 25's rejoin on both
// stores: a client cut after 20 of 200 tokens on instance A (this test's
// process) comes back on instance B (another process) with Last-Event-ID and receives exactly tokens 21..200 and
// done; a second tab opened on B during the answer receives it live; the
// cut client's events plus the rest equal, byte for byte, what the second
// tab received from the start; the turn was stored whole.
func TestRejoinAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "dynamodb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			v, err := auth.NewJWTVerifier([]byte(copilotSecret), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			alice, _ := v.Issue("alice", time.Hour)
			llm := llmtest.NewServer(t)
			vars := map[string]string{
				"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": copilotSecret,
				"OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "sk-test-llm-key", "OPENAI_MODEL": "test-model",
			}
			if kind == "dynamodb" {
				vars["STORE"], vars["TABLE_NAME"] = "dynamodb", "rejoin-"+uuid.NewString()
				vars["DYNAMODB_ENDPOINT"], vars["AWS_REGION"] = dynalitetest.Start(t), "us-east-1"
			}
			urlA, _, _, _ := start(t, vars)
			urlB := startChild(t, buildLocalServer(t), vars).url
			tokens := make([]string, 200)
			for i := range tokens {
				tokens[i] = fmt.Sprintf("t%d ", i+1)
			}
			llm.Enqueue(llmtest.Reply{Chunks: tokens, ChunkDelay: 5 * time.Millisecond}, llmtest.Reply{Text: "Counting"})
			project, sid := uuid.NewString(), uuid.NewString()
			chat := "/v3/projects/" + project + "/chat"
			send := func(method, url, path string, body any, header ...string) *http.Response {
				t.Helper()
				return authed(t, alice, method, url+path, body, header...)
			}

			resp := send(http.MethodPost, urlA, chat+"/stream", map[string]any{"message": "count to 200", "session_id": sid})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("stream: %d", resp.StatusCode)
			}
			// A second tab on B once the answer has begun.
			var secondTab []ssetest.Frame
			tabDone := make(chan struct{})
			cut := ssetest.ReadFrames(resp.Body, func(fs []ssetest.Frame) bool {
				if len(fs) == 1 {
					go func() {
						defer close(tabDone)
						tab := send(http.MethodGet, urlB, chat+"/sessions/"+sid+"/stream", nil)
						if tab.StatusCode != http.StatusOK {
							t.Errorf("second tab: status %d", tab.StatusCode)
							return
						}
						secondTab = ssetest.ReadFrames(tab.Body, nil)
					}()
				}
				_, n := ssetest.Content(fs)
				return n == 20
			})
			resp.Body.Close() // the network drops after 20 tokens

			rest := send(http.MethodGet, urlB, chat+"/sessions/"+sid+"/stream", nil, "Last-Event-ID", cut[len(cut)-1].ID)
			if rest.StatusCode != http.StatusOK {
				t.Fatalf("rejoin: status %d", rest.StatusCode)
			}
			restFrames := ssetest.ReadFrames(rest.Body, nil)
			got, n := ssetest.Content(restFrames)
			if n != 180 || got != strings.Join(tokens[20:], "") {
				t.Fatalf("the rest holds %d tokens: %.60q...", n, got)
			}
			if !strings.Contains(restFrames[len(restFrames)-1].Raw, `"type":"done"`) {
				t.Fatalf("the rest ends with %q", restFrames[len(restFrames)-1].Raw)
			}
			<-tabDone
			if ssetest.Joined(cut)+ssetest.Joined(restFrames) != ssetest.Joined(secondTab) {
				t.Fatalf("cut + rest (%d + %d events) differ from the second tab's %d events", len(cut), len(restFrames), len(secondTab))
			}

			// Stored whole, counted once, not aborted.
			var hist struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			}
			h := send(http.MethodGet, urlA, chat+"/sessions/"+sid+"/history", nil)
			if err := json.NewDecoder(h.Body).Decode(&hist); err != nil {
				t.Fatal(err)
			}
			if len(hist.Messages) != 2 || hist.Messages[1].Content != strings.Join(tokens, "") {
				t.Fatalf("history: %+v", hist.Messages)
			}
			var list []struct {
				ThreadID string         `json:"thread_id"`
				Stats    map[string]any `json:"stats"`
			}
			l := send(http.MethodGet, urlB, chat+"/sessions", nil)
			if err := json.NewDecoder(l.Body).Decode(&list); err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || fmt.Sprint(list[0].Stats["aborted_turns"]) != "0" {
				t.Fatalf("sessions: %+v", list)
			}
		})
	}
}

// authed sends a request to url with token as its bearer, body as JSON
// (none when nil) and the header pairs given; the body is closed at the
// end of the test.
func authed(t *testing.T, token, method, url string, body any, header ...string) *http.Response {
	t.Helper()
	return apitest.OpenURL(t, method, url, token, body, header...)
}
