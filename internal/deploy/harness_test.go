package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// The bootstraps are built once per test binary (tests and benchmarks
// share them), for the host's architecture so that they can run here.
var build struct {
	once sync.Once
	dir  string
	out  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// bootstraps builds every function (once) and returns the directory
// holding <name>/bootstrap.
func bootstraps(tb testing.TB) string {
	tb.Helper()
	build.once.Do(func() {
		arch, err := lambdatest.HostArch()
		if err != nil {
			build.err = err
			return
		}
		build.dir, build.err = os.MkdirTemp("", "agentchat-bootstraps-")
		if build.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		build.out, build.err = lambdatest.BuildFunctions(ctx, build.dir, arch)
	})
	if build.err != nil {
		tb.Fatalf("build the bootstraps: %v", build.err)
	}
	return build.dir
}

// storeCall is one DynamoDB request seen by the counting proxy.
type storeCall struct {
	Op         string
	Start, End time.Time
	// RCU and WCU are the capacity units dynalite reported for the call
	// (see dynamoCounter.capacity); zero when it was not asked for them.
	RCU, WCU float64
}

// dynamoCounter is a reverse proxy in front of dynalite recording every
// DynamoDB operation with its timing.
type dynamoCounter struct {
	URL   string
	mu    sync.Mutex
	calls []storeCall
	// capacity makes the proxy ask every request for its consumed
	// capacity (ReturnConsumedCapacity TOTAL) and record it; the answer
	// then carries ConsumedCapacity, which the store code ignores.
	capacity bool
}

func newDynamoCounter(tb testing.TB, endpoint string) *dynamoCounter {
	tb.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		tb.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	c := &dynamoCounter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call := storeCall{Op: strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."), Start: time.Now()}
		c.mu.Lock()
		capacity := c.capacity
		c.mu.Unlock()
		if capacity {
			rec := httptest.NewRecorder()
			req, leastRead := askCapacity(tb, r)
			proxy.ServeHTTP(rec, req)
			call.RCU, call.WCU = consumedCapacity(call.Op, rec.Body.Bytes())
			if failedConditionalWrite(call.Op, rec.Code, rec.Body.Bytes()) {
				call.WCU = max(call.WCU, 1)
			}
			if rec.Code == http.StatusOK {
				call.RCU = max(call.RCU, leastRead)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		} else {
			proxy.ServeHTTP(w, r)
		}
		call.End = time.Now()
		c.mu.Lock()
		c.calls = append(c.calls, call)
		c.mu.Unlock()
	}))
	tb.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// between returns the calls that started in [from, to).
func (c *dynamoCounter) between(from, to time.Time) []storeCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []storeCall
	for _, call := range c.calls {
		if !call.Start.Before(from) && call.Start.Before(to) {
			out = append(out, call)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// rounds counts the sequential round trips of calls: calls that overlap
// in time form one round.
func rounds(calls []storeCall) int {
	n := 0
	var end time.Time
	for _, c := range calls {
		if n == 0 || !c.Start.Before(end) {
			n++
			end = c.End
		} else if c.End.After(end) {
			end = c.End
		}
	}
	return n
}

func ops(calls []storeCall) string {
	var s []string
	for _, c := range calls {
		s = append(s, c.Op)
	}
	return strings.Join(s, ", ")
}

// gate is an OpenAI-compatible endpoint in front of llmtest that holds
// each streamed token back until the previous one has reached the Lambda
// Runtime API as an SSE event: if events were buffered anywhere between
// the handler and the runtime, the stream would stall and the gate report
// it.
type gate struct {
	URL string

	mu       sync.Mutex
	changed  chan struct{}
	seen     []string  // contents of the content events the runtime received
	firstReq time.Time // arrival of the first streaming request
	lastEnd  time.Time // end of the last streamed answer
	err      error
	wait     time.Duration
	// hold makes the gate wait for each event (off: a plain relay, for
	// benchmarks).
	hold bool
}

func newGate(tb testing.TB, upstream *llmtest.Server) *gate {
	tb.Helper()
	g := &gate{changed: make(chan struct{}), wait: 30 * time.Second, hold: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream.URL+r.URL.Path, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			_, _ = io.Copy(w, resp.Body)
			return
		}
		g.mu.Lock()
		if g.firstReq.IsZero() {
			g.firstReq = time.Now()
		}
		g.mu.Unlock()
		g.relay(w, resp.Body)
		g.mu.Lock()
		g.lastEnd = time.Now()
		g.mu.Unlock()
	}))
	tb.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// relay forwards the SSE lines; after each event carrying content it waits
// until the runtime has seen that content.
func (g *gate) relay(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	sc := bufio.NewScanner(body)
	forwarded, pending := 0, ""
	for sc.Scan() {
		line := sc.Text()
		_, _ = io.WriteString(w, line+"\n")
		if line != "" {
			if c := lambdatest.DeltaContent(strings.TrimPrefix(line, "data: ")); c != "" {
				pending = c
			}
			continue
		}
		_ = rc.Flush()
		if pending == "" || !g.hold {
			continue
		}
		forwarded++
		if err := g.awaitSeen(forwarded, pending); err != nil {
			g.mu.Lock()
			g.err = err
			g.mu.Unlock()
			return // cut the stream: the turn fails and the test reports err
		}
		pending = ""
	}
}

func (g *gate) awaitSeen(n int, content string) error {
	deadline := time.After(g.wait)
	for {
		g.mu.Lock()
		if len(g.seen) >= n {
			got := g.seen[n-1]
			g.mu.Unlock()
			if got != content {
				return fmt.Errorf("content event %d reached the runtime as %q, the LLM sent %q", n, got, content)
			}
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("token %d (%q) did not reach the Lambda Runtime API as an SSE event within %v of being sent: the stream is buffered", n, content, g.wait)
		}
	}
}

// saw records a content event received by the runtime.
func (g *gate) saw(content string) {
	g.mu.Lock()
	g.seen = append(g.seen, content)
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) state() (first time.Time, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.firstReq, g.err
}

func (g *gate) reset() {
	g.mu.Lock()
	g.seen, g.firstReq, g.lastEnd, g.err = nil, time.Time{}, time.Time{}, nil
	g.mu.Unlock()
}

// lastAnswerEnd is when the last streamed answer relayed since reset ended.
func (g *gate) lastAnswerEnd() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lastEnd
}

// stack is what a bootstrap runs against: DynamoDB (dynalite behind the
// counting proxy), SSM holding the secrets, and the scripted LLM behind
// the gate.
type stack struct {
	Dynamo *dynamoCounter
	Direct string // dynalite itself
	Table  string
	SSM    *lambdatest.SSM
	LLM    *llmtest.Server
	Gate   *gate
}

// Secrets held by the fake SSM.
const (
	llmKey    = "sk-e2e-from-ssm"
	jwtParam  = "/agentchat/e2e/jwt-secret"
	llmParam  = "/agentchat/e2e/openai-api-key"
	funcLimit = 2 * time.Minute
)

func newStack(tb testing.TB) *stack {
	tb.Helper()
	direct := dynalitetest.Start(tb)
	llm := llmtest.NewServer(tb)
	return &stack{
		Dynamo: newDynamoCounter(tb, direct),
		Direct: direct,
		Table:  "t-" + uuid.NewString(),
		SSM:    lambdatest.NewSSM(tb, map[string]string{jwtParam: lambdatest.Secret, llmParam: llmKey}),
		LLM:    llm,
		Gate:   newGate(tb, llm),
	}
}

// env is the environment of a bootstrap, as the template gives it: secrets
// as SSM parameter names only.
func (s *stack) env() map[string]string {
	return map[string]string{
		"STORE": "dynamodb", "TABLE_NAME": s.Table, "DYNAMODB_ENDPOINT": s.Dynamo.URL,
		"AWS_REGION": lambdatest.Region, "AWS_ACCESS_KEY_ID": "lambdatest", "AWS_SECRET_ACCESS_KEY": "lambdatest",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ENDPOINT_URL_SSM": s.SSM.URL,
		"JWT_SECRET_PARAM":     jwtParam, "OPENAI_API_KEY_PARAM": llmParam,
		"OPENAI_BASE_URL": s.Gate.URL + "/v1", "OPENAI_MODEL": "gpt-4o-mini", "LOG_LEVEL": "info",
	}
}

// jwtFor returns a JWT of user signed with the secret held in SSM.
func jwtFor(tb testing.TB, user string) string {
	tb.Helper()
	v, err := auth.NewJWTVerifier([]byte(lambdatest.Secret), time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := v.Issue(user, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// bootstrapPath returns the built bootstrap of function name.
func bootstrapPath(tb testing.TB, name string) string {
	return filepath.Join(bootstraps(tb), name, "bootstrap")
}

// streamEvent returns the function URL event of a chat turn.
func streamEvent(tb testing.TB, user, sessionID, message string) []byte {
	tb.Helper()
	body, _ := json.Marshal(map[string]string{"message": message, "session_id": sessionID})
	ev, err := lambdatest.FunctionURLRequest(http.MethodPost, "/v3/projects/p1/chat/stream",
		map[string]string{"Authorization": "Bearer " + jwtFor(tb, user), "Content-Type": "application/json"}, string(body))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// waitChunk returns chunk i of inv, failing with the process's output if
// the process died first.
func waitChunk(tb testing.TB, p *lambdatest.Process, inv *lambdatest.Invocation, i int) (lambdatest.Chunk, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), funcLimit)
	defer cancel()
	go func() {
		select {
		case <-p.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	c, err := inv.Chunk(ctx, i)
	select {
	case <-p.Exited():
		if err != nil {
			tb.Fatalf("bootstrap %s", p.Failure())
		}
	default:
	}
	return c, err
}
