package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/lambdaapp/catalogfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/dynamo"
)

// MaxBootstrapBytes is the size budget of one function. The functions that
// run the agents carry the tokenizer's embedded vocabularies (about 3 MB,
// package contextwin), so that no vocabulary is fetched at cold start.
const MaxBootstrapBytes = 26 << 20

func TestBootstrapSizes(t *testing.T) {
	dir := bootstraps(t)
	for _, name := range folders(t) {
		fi, err := os.Stat(filepath.Join(dir, name, "bootstrap"))
		if err != nil {
			t.Errorf("functions/%s was not built: %v", name, err)
			continue
		}
		if fi.Size() > MaxBootstrapBytes {
			t.Errorf("functions/%s: bootstrap is %.1f MB, over the %d MB budget", name, float64(fi.Size())/(1<<20), MaxBootstrapBytes>>20)
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("functions/%s: bootstrap is not executable", name)
		}
	}
	t.Logf("scripts/build-lambdas.sh:\n%s", build.out)
}

// sseEvents splits one chunk of an SSE body into its events (comments
// dropped) and reports whether the chunk was only a comment.
func sseEvents(chunk []byte) (events []string, comment bool) {
	for _, block := range strings.Split(strings.TrimSuffix(string(chunk), "\n\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(block, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, d)
			}
		}
		if len(data) > 0 {
			events = append(events, strings.Join(data, "\n"))
		}
	}
	return events, len(events) == 0 && strings.HasPrefix(string(chunk), ":")
}

// TestStreamingBootstrapEndToEnd runs the built chat-stream bootstrap as
// Lambda does: started with only the template's environment (secrets as
// SSM parameter names), it reads its secrets from SSM at cold start, asks
// the fake Runtime API for the next event, and streams its response back
// with chunked transfer encoding. Each SSE event must arrive in its own
// chunk, and as soon as it is written: the gate holds every LLM token back
// until the previous event has reached the Runtime API.
func TestStreamingBootstrapEndToEnd(t *testing.T) {
	path := bootstrapPath(t, "chat-stream")
	st := newStack(t)
	words := []string{"Hello", " from", " a", " Lambda", " stream"}
	st.LLM.Enqueue(llmtest.Reply{Chunks: words}, llmtest.Reply{Text: "Greeting"})

	rt := lambdatest.NewRuntime(t, "chat-stream")
	sid := uuid.NewString()
	inv := rt.Invoke(streamEvent(t, "alice", sid, "hi"), funcLimit)
	p := lambdatest.StartBootstrap(t, path, rt, st.env())

	// Chunk 0: the prelude, alone.
	c0, err := waitChunk(t, p, inv, 0)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	prelude, rest, err := lambdatest.SplitPrelude(c0.Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 0 {
		t.Errorf("the prelude's chunk also carries body bytes %q", rest)
	}
	if prelude.StatusCode != 200 || prelude.Headers["Content-Type"] != "text/event-stream" || prelude.Headers["X-Session-Id"] != sid {
		t.Fatalf("prelude %+v", prelude)
	}

	type event struct {
		Type, Content, Error, SessionID string
	}
	var got []event
	for i := 1; ; i++ {
		c, err := waitChunk(t, p, inv, i)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		evs, comment := sseEvents(c.Data)
		if comment {
			continue
		}
		if len(evs) != 1 {
			t.Fatalf("chunk %d carries %d events, want each event in its own chunk: %q", i, len(evs), c.Data)
		}
		var ev struct {
			Type      string `json:"type"`
			Content   string `json:"content"`
			Error     string `json:"error"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(evs[0]), &ev); err != nil {
			t.Fatalf("chunk %d: %q: %v", i, evs[0], err)
		}
		got = append(got, event(ev))
		if ev.Type == "content" {
			st.Gate.saw(ev.Content) // releases the next token
		}
	}
	res, err := inv.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, gateErr := st.Gate.state(); gateErr != nil {
		t.Fatal(gateErr)
	}
	if !res.Streamed || res.ContentType != "application/vnd.awslambda.http-integration-response" || len(res.Error) > 0 ||
		res.Trailer.Get("Lambda-Runtime-Function-Error-Type") != "" {
		t.Fatalf("response: streamed %v, content type %q, error %q, trailer %v", res.Streamed, res.ContentType, res.Error, res.Trailer)
	}

	var contents []string
	for _, ev := range got {
		if ev.SessionID != sid || ev.Type == "error" {
			t.Errorf("event %+v", ev)
		}
		if ev.Type == "content" {
			contents = append(contents, ev.Content)
		}
	}
	if strings.Join(contents, "|") != strings.Join(words, "|") || got[len(got)-1].Type != "done" {
		t.Fatalf("events %+v, want one content event per token then done", got)
	}

	// The LLM key and the JWT secret came from SSM, decrypted, in one call.
	if calls := st.SSM.Calls(); len(calls) != 1 || !calls[0].WithDecryption || len(calls[0].Names) != 2 {
		t.Errorf("SSM calls %+v, want one decrypted GetParameters of both parameters", calls)
	}
	if reqs := st.LLM.Requests(); len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer "+llmKey {
		t.Errorf("the LLM was not called with the key from SSM")
	}

	// The turn is in DynamoDB.
	s, err := dynamo.New(context.Background(), dynamo.Options{TableName: st.Table, Endpoint: st.Direct, Region: lambdatest.Region})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.ListMessages(context.Background(), store.Key{ProjectID: "p1", UserID: "alice", ThreadID: sid}, 0)
	if err != nil || len(msgs) != 2 || msgs[1].Content != strings.Join(words, "") {
		t.Fatalf("stored messages %+v, %v", msgs, err)
	}

	first, _ := st.Gate.state()
	before := st.Dynamo.between(inv.Taken(), first)
	t.Logf("DynamoDB before the first LLM request: %d calls in %d sequential round trips (%s)", len(before), rounds(before), ops(before))
	if p.Err() != nil {
		t.Fatalf("bootstrap %s", p.Failure())
	}
	if out := p.Output(); bytes.Contains([]byte(out), []byte(llmKey)) || strings.Contains(out, lambdatest.Secret) {
		t.Fatal("a secret appears in the function's logs")
	}
}

// TestBareBootstrap runs the built v1-root bootstrap, a bare function,
// with the template's global environment (a secret named by JWT_SECRET_PARAM
// included): it must answer GET /v1 without one call to SSM and without a
// reachable DynamoDB.
func TestBareBootstrap(t *testing.T) {
	path := bootstrapPath(t, catalogfn.RootFunction)
	ssm := lambdatest.NewSSM(t, map[string]string{jwtParam: lambdatest.Secret})
	env := map[string]string{
		"STORE": "dynamodb", "TABLE_NAME": "t-bare", "DYNAMODB_ENDPOINT": "http://127.0.0.1:9",
		"AWS_REGION": lambdatest.Region, "AWS_ACCESS_KEY_ID": "lambdatest", "AWS_SECRET_ACCESS_KEY": "lambdatest",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ENDPOINT_URL_SSM": ssm.URL, "JWT_SECRET_PARAM": jwtParam, "LOG_LEVEL": "info",
	}
	ev, err := lambdatest.APIRequest("GET "+catalogfn.PathRootBare, "/v1", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	rt := lambdatest.NewRuntime(t, catalogfn.RootFunction)
	inv := rt.Invoke(payload, funcLimit)
	p := lambdatest.StartBootstrap(t, path, rt, env)
	ctx, cancel := context.WithTimeout(context.Background(), funcLimit)
	defer cancel()
	res, err := inv.Wait(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Output())
	}
	var resp struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	if err := json.Unmarshal(res.Body, &resp); err != nil || resp.StatusCode != 200 || strings.TrimSpace(resp.Body) != `{"status":"ok"}` {
		t.Fatalf("response %s (%v), error %s\n%s", res.Body, err, res.Error, p.Output())
	}
	if calls := ssm.Calls(); len(calls) != 0 {
		t.Fatalf("a bare function called SSM: %+v", calls)
	}
}
