package localserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/config"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// bpSecret is the JWT secret of the back-pressure servers.
const bpSecret = "backpressure-secret-0123456789abcdef"

// bpAnswer is a finished HTTP answer.
type bpAnswer struct {
	status int
	header http.Header
	body   string
	err    error
}

// bpClient sends requests to the servers as users of bpSecret.
type bpClient struct {
	t   *testing.T
	jwt *auth.JWTVerifier
}

// send posts body to url as user from a goroutine; the whole answer comes
// on the channel (a /v1 stream sends its headers with its first chunk, so
// a held request must not be waited for in line). The request is cancelled
// when the test ends.
func (c *bpClient) send(user, url string, body any) chan bpAnswer {
	c.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	tok, err := c.jwt.Issue(user, time.Hour)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	out := make(chan bpAnswer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- bpAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		out <- bpAnswer{status: resp.StatusCode, header: resp.Header, body: string(data), err: err}
	}()
	return out
}

// post sends body and waits for the answer.
func (c *bpClient) post(user, url string, body any) bpAnswer {
	c.t.Helper()
	a := <-c.send(user, url, body)
	if a.err != nil {
		c.t.Fatalf("POST %s: %v", url, a.err)
	}
	return a
}

// bpSurface is one way to run a turn.
type bpSurface struct {
	name, path string
	body       func(msg string) map[string]any
}

var bpSurfaces = []bpSurface{
	{"project chat stream", "/v3/projects/p1/chat/stream", func(m string) map[string]any { return map[string]any{"message": m} }},
	{"project chat, not streamed", "/v3/projects/p1/chat/stream", func(m string) map[string]any { return map[string]any{"message": m, "stream": false} }},
	{"completions stream", "/v1/chat/completions", func(m string) map[string]any {
		return map[string]any{"model": "naked", "stream": true, "messages": []any{map[string]any{"role": "user", "content": m}}}
	}},
	{"completions", "/v1/chat/completions", func(m string) map[string]any {
		return map[string]any{"model": "naked", "messages": []any{map[string]any{"role": "user", "content": m}}}
	}},
	{"chat", "/v1/chat", func(m string) map[string]any { return map[string]any{"agent_id": "naked", "message": m} }},
	{"chat sync", "/v1/chat/sync", func(m string) map[string]any { return map[string]any{"agent_id": "naked", "message": m} }},
}

// checkTooMany asserts the 429 of the cap of limit turns at once: a
// positive integer Retry-After and the cap's message in the surface's
// error shape.
func checkTooMany(t *testing.T, what string, a bpAnswer, limit int, openAI bool) {
	t.Helper()
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("%s: %d %s, want 429", what, a.status, a.body)
	}
	if n, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || n < 1 || n > int(config.DefaultTurnLease.Seconds()) {
		t.Errorf("%s: Retry-After = %q, want a positive integer of at most the lease's lifetime", what, a.header.Get("Retry-After"))
	}
	var body struct {
		Message string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil {
		t.Fatalf("%s: body %q: %v", what, a.body, err)
	}
	want := agent.TooManyTurnsMessage(limit)
	switch {
	case openAI && (body.Error == nil || body.Error.Message != want || body.Error.Type != "rate_limit_error" || body.Error.Code == ""):
		t.Errorf("%s: body %s, want an OpenAI rate_limit_error %q", what, a.body, want)
	case !openAI && body.Message != want:
		t.Errorf("%s: body %s, want {\"message\": %q}", what, a.body, want)
	}
}

// TestTurnsPerUserAcrossInstances: two servers share one DynamoDB table, as
// instances behind one endpoint do.
// A user's turns on both, through both surfaces, count against one cap
// (MAX_TURNS_PER_USER, default 8); one more is 429 with Retry-After on
// every route of either server, another user is not affected, and a turn
// is let in again as soon as one ended.
func TestTurnsPerUserAcrossInstances(t *testing.T) {
	for _, tc := range []struct {
		store string
		limit string // MAX_TURNS_PER_USER; empty: the default
	}{
		// SQLite counts the slots in the process (one local server per
		// file): its cap is tested through both surfaces of one server in
		// the agent and handler tests.
		{"dynamodb", "3"},
	} {
		t.Run(tc.store, func(t *testing.T) {
			llmSrv := llmtest.NewServer(t)
			gate := apitest.NewLLMGate(t, llmSrv)
			vars := map[string]string{
				"ADDR": "127.0.0.1:0", "JWT_SECRET": bpSecret,
				"OPENAI_BASE_URL": llmSrv.BaseURL(), "OPENAI_MODEL": "m",
				"DATA_DIR": t.TempDir(),
			}
			limit := config.DefaultMaxTurnsPerUser
			if tc.limit != "" {
				vars["MAX_TURNS_PER_USER"] = tc.limit
				limit, _ = strconv.Atoi(tc.limit)
			}
			if tc.store == "dynamodb" {
				vars["STORE"] = "dynamodb"
				vars["TABLE_NAME"] = "bp-" + uuid.NewString()
				vars["DYNAMODB_ENDPOINT"] = dynalitetest.Start(t)
				vars["AWS_REGION"] = "us-east-1"
			}
			// The second instance: same store, its own data dir for
			// SQLite's sake only when the store is DynamoDB.
			urlA, _, _, _ := start(t, vars)
			varsB := map[string]string{}
			for k, v := range vars {
				varsB[k] = v
			}
			if tc.store == "dynamodb" {
				varsB["DATA_DIR"] = t.TempDir()
			}
			urlB, _, _, _ := start(t, varsB)
			servers := []string{urlA, urlB}
			jwt, err := auth.NewJWTVerifier([]byte(bpSecret), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			c := &bpClient{t: t, jwt: jwt}

			// limit turns of alice, spread over both servers and the
			// streamed routes of both surfaces.
			held := make([]chan bpAnswer, limit)
			for i := range limit {
				sf := bpSurfaces[0]
				if i%2 == 1 {
					sf = bpSurfaces[2]
				}
				held[i] = c.send("alice", servers[i%2]+sf.path, sf.body(fmt.Sprintf("hold %d", i)))
			}
			gate.WaitHeld(t, limit)

			for _, sf := range bpSurfaces {
				for si, srv := range servers {
					what := fmt.Sprintf("%s on server %d", sf.name, si+1)
					checkTooMany(t, what, c.post("alice", srv+sf.path, sf.body("one more")), limit, strings.HasPrefix(sf.path, "/v1/"))
				}
			}
			for si, srv := range servers {
				for _, sf := range []bpSurface{bpSurfaces[1], bpSurfaces[3]} {
					if a := c.post("bob", srv+sf.path, sf.body("hi")); a.status != http.StatusOK {
						t.Errorf("bob, %s on server %d: %d %s", sf.name, si+1, a.status, a.body)
					}
				}
			}

			// Two turns end, one per surface: two more are let in, on the
			// other server.
			gate.Release(0)
			gate.Release(1)
			for _, i := range []int{0, 1} {
				if a := <-held[i]; a.err != nil || a.status != http.StatusOK || strings.Contains(a.body, `"error"`) {
					t.Fatalf("released turn %d: %d %v %s", i, a.status, a.err, a.body)
				}
			}
			for si, sf := range []bpSurface{bpSurfaces[1], bpSurfaces[3]} {
				if a := c.post("alice", servers[1-si]+sf.path, sf.body("after one ended")); a.status != http.StatusOK {
					t.Fatalf("%s after one ended: %d %s", sf.name, a.status, a.body)
				}
			}
			// Those ended as well; the cap still holds.
			next := c.send("alice", servers[0]+bpSurfaces[2].path, bpSurfaces[2].body("hold 100"))
			c2 := c.send("alice", servers[1]+bpSurfaces[0].path, bpSurfaces[0].body("hold 101"))
			gate.WaitHeld(t, 2)
			checkTooMany(t, "one more again", c.post("alice", servers[1]+bpSurfaces[5].path, bpSurfaces[5].body("one more")), limit, true)
			gate.ReleaseAll()
			for _, ch := range append(held[2:], next, c2) {
				if a := <-ch; a.err != nil || a.status != http.StatusOK {
					t.Errorf("held turn: %d %v %s", a.status, a.err, a.body)
				}
			}
		})
	}
}
