package localserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// sendKey posts body to url with the Authorization header authz from a
// goroutine; the whole answer comes on the channel (cancelled when the
// test ends).
func sendKey(t *testing.T, authz, url string, body any) chan bpAnswer {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authz)
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

// TestKeyLimitsAcrossInstances: two servers on one DynamoDB table enforce
// one API key's limits together. The key's max_parallel (3, above
// MAX_TURNS_PER_USER 2) lets 3 turns of one user run over both servers and
// refuses the 4th on either; its rpm counts the requests of both servers
// in one minute.
func TestKeyLimitsAcrossInstances(t *testing.T) {
	llmSrv := llmtest.NewServer(t)
	gate := apitest.NewLLMGate(t, llmSrv)
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "JWT_SECRET": bpSecret,
		"OPENAI_BASE_URL": llmSrv.BaseURL(), "OPENAI_MODEL": "m",
		"DATA_DIR": t.TempDir(), "MAX_TURNS_PER_USER": "2",
		"STORE": "dynamodb", "TABLE_NAME": "kl-" + uuid.NewString(),
		"DYNAMODB_ENDPOINT": dynalitetest.Start(t), "AWS_REGION": "us-east-1",
	}
	urlA, _, _, _ := start(t, vars)
	varsB := map[string]string{}
	for k, v := range vars {
		varsB[k] = v
	}
	varsB["DATA_DIR"] = t.TempDir()
	urlB, _, _, _ := start(t, varsB)
	servers := []string{urlA, urlB}

	jwt, err := auth.NewJWTVerifier([]byte(bpSecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	newKey := func(limits map[string]any) string {
		t.Helper()
		a := <-sendKey(t, "Bearer "+tok, urlA+"/v3/access/users/me/api-keys", limits)
		var k struct {
			Key string `json:"key"`
		}
		if a.err != nil || a.status != http.StatusCreated || json.Unmarshal([]byte(a.body), &k) != nil || k.Key == "" {
			t.Fatalf("create key: %d %v %s", a.status, a.err, a.body)
		}
		return "Bearer " + k.Key
	}

	t.Run("max_parallel", func(t *testing.T) {
		const n = 3
		key := newKey(map[string]any{"name": "app", "max_parallel": n})
		held := make([]chan bpAnswer, n)
		for i := range n {
			sf := bpSurfaces[2] // completions stream
			if i == 1 {
				sf = bpSurfaces[0] // project chat stream
			}
			held[i] = sendKey(t, key, servers[i%2]+sf.path, sf.body(fmt.Sprintf("hold %d", i)))
		}
		gate.WaitHeld(t, n)
		for si, srv := range servers {
			for _, sf := range []bpSurface{bpSurfaces[3], bpSurfaces[1]} {
				a := <-sendKey(t, key, srv+sf.path, sf.body("one more"))
				if a.err != nil || a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
					t.Errorf("%s on server %d: %d %v %s, want 429 with Retry-After", sf.name, si+1, a.status, a.err, a.body)
				}
			}
		}
		gate.ReleaseAll()
		for i, c := range held {
			if a := <-c; a.err != nil || a.status != http.StatusOK {
				t.Errorf("held turn %d: %d %v %s", i, a.status, a.err, a.body)
			}
		}
	})

	t.Run("rpm", func(t *testing.T) {
		const rpm = 3
		// The minute is the real clock's: should one end during the
		// requests, the count starts again and so does the test, with a
		// fresh key.
		for attempt := 0; ; attempt++ {
			key := newKey(map[string]any{"name": fmt.Sprint("app ", attempt), "rpm": rpm})
			minute := time.Now().UTC().Truncate(time.Minute)
			var got []int
			for i := range rpm + 1 {
				sf := bpSurfaces[5] // chat sync
				a := <-sendKey(t, key, servers[i%2]+sf.path, sf.body("hi"))
				if a.err != nil {
					t.Fatal(a.err)
				}
				got = append(got, a.status)
				if i == rpm && a.status == http.StatusTooManyRequests && a.header.Get("x-ratelimit-remaining-requests") != "0" {
					t.Errorf("refusal: x-ratelimit-remaining-requests %q", a.header.Get("x-ratelimit-remaining-requests"))
				}
			}
			if !time.Now().UTC().Truncate(time.Minute).Equal(minute) && attempt < 2 {
				continue
			}
			if want := []int{200, 200, 200, 429}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("statuses %v, want %v", got, want)
			}
			return
		}
	})
}
