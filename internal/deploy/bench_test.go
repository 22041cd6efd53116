package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/dynamo"
)

// BenchmarkColdStart measures a cold start under the fake Runtime API:
// from the process start to the first bytes of the response (the whole
// buffered response of an API function; the prelude of a stream). Secrets
// come from the (local) fake SSM; with DYNAMODB_ENDPOINT set the function
// also checks its table exists, which it does not do in AWS.
func BenchmarkColdStart(b *testing.B) {
	st := newStack(b)
	st.Gate.hold = false
	sessionsList := func(tb testing.TB) []byte {
		ev, err := lambdatest.APIRequest("GET /v3/projects/{project_id}/chat/sessions", "/v3/projects/p1/chat/sessions",
			map[string]string{"Authorization": "Bearer " + jwtFor(tb, "alice")}, "")
		if err != nil {
			tb.Fatal(err)
		}
		out, _ := json.Marshal(ev)
		return out
	}
	chatStream := func(tb testing.TB) []byte { return streamEvent(tb, "alice", uuid.NewString(), "hi") }
	for _, bc := range []struct {
		name  string
		event func(testing.TB) []byte
	}{{"sessions-list", sessionsList}, {"chat-stream", chatStream}} {
		b.Run(bc.name, func(b *testing.B) {
			path := bootstrapPath(b, bc.name)
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				// A Runtime API per process, as each environment has its own.
				rt := lambdatest.NewRuntime(b, bc.name)
				inv := rt.Invoke(bc.event(b), funcLimit)
				b.StartTimer()
				p := lambdatest.StartBootstrap(b, path, rt, st.env())
				c, err := waitChunk(b, p, inv, 0)
				b.StopTimer()
				if err != nil {
					b.Fatalf("no response: %v", err)
				}
				if bc.name == "sessions-list" && !strings.Contains(string(c.Data), `"statusCode":200`) {
					b.Fatalf("response %s", c.Data)
				}
				total += c.At.Sub(p.Started)
				if _, err := inv.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				p.Stop()
				rt.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/cold-start")
		})
	}
}

// BenchmarkChatStreamTurn measures a warm chat-stream invocation: the
// DynamoDB calls made before the first LLM request (and how many
// sequential round trips they take), and the time from the event to the
// first token reaching the Runtime API. "new" turns create their session;
// "follow-up" turns continue one.
func BenchmarkChatStreamTurn(b *testing.B) {
	st := newStack(b)
	st.Gate.hold = false
	rt := lambdatest.NewRuntime(b, "chat-stream")
	p := lambdatest.StartBootstrap(b, bootstrapPath(b, "chat-stream"), rt, st.env())

	turn := func(b *testing.B, sid string) (calls []storeCall, firstToken time.Duration) {
		st.Gate.reset()
		inv := rt.Invoke(streamEvent(b, "alice", sid, "hi"), funcLimit)
		for i := 0; ; i++ {
			c, err := waitChunk(b, p, inv, i)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if firstToken == 0 && strings.Contains(string(c.Data), `"type":"content"`) {
				firstToken = c.At.Sub(inv.Taken())
			}
		}
		res, err := inv.Wait(context.Background())
		if err != nil || len(res.Error) > 0 || firstToken == 0 {
			b.Fatalf("turn: %v %s (no content: %v)", err, res.Error, firstToken == 0)
		}
		first, _ := st.Gate.state()
		return st.Dynamo.between(inv.Taken(), first), firstToken
	}
	for _, follow := range []bool{false, true} {
		name := map[bool]string{false: "new", true: "follow-up"}[follow]
		b.Run(name, func(b *testing.B) {
			var ncalls, nrounds int
			var first time.Duration
			var last []storeCall
			b.ResetTimer()
			for range b.N {
				sid := uuid.NewString()
				if follow {
					b.StopTimer()
					turn(b, sid)
					b.StartTimer()
				}
				calls, ft := turn(b, sid)
				ncalls += len(calls)
				nrounds += rounds(calls)
				first += ft
				last = calls
			}
			b.ReportMetric(float64(ncalls)/float64(b.N), "store-calls/turn")
			b.ReportMetric(float64(nrounds)/float64(b.N), "store-rounds/turn")
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms/first-token")
			b.Logf("%s turn, DynamoDB before the first LLM request: %s", name, ops(last))
		})
	}
}

// BenchmarkChatStreamAbort measures what an open stream costs in abort-flag
// reads (GetItem calls while the answer streams, per second) and how long an
// abort requested through DynamoDB, as the chat-abort function does it,
// takes to end the stream (from the request stored to the end of the
// invocation). The answer streams a word every 100 ms for 6 s; the abort
// comes 3 to 4 s after its first token.
func BenchmarkChatStreamAbort(b *testing.B) {
	st := newStack(b)
	st.Gate.hold = false
	rt := lambdatest.NewRuntime(b, "chat-stream")
	p := lambdatest.StartBootstrap(b, bootstrapPath(b, "chat-stream"), rt, st.env())
	ds, err := dynamo.New(context.Background(), dynamo.Options{TableName: st.Table, Endpoint: st.Direct, Region: lambdatest.Region})
	if err != nil {
		b.Fatal(err)
	}
	const (
		words    = 60
		gap      = 100 * time.Millisecond
		streamed = 3 * time.Second
	)
	text := strings.TrimSpace(strings.Repeat("word ", words))
	var (
		reads, abortMS float64
		open           time.Duration
	)
	b.ResetTimer()
	for range b.N {
		sid := uuid.NewString()
		st.LLM.Enqueue(llmtest.Reply{Text: text, ChunkDelay: gap})
		inv := rt.Invoke(streamEvent(b, "alice", sid, "hi"), funcLimit)
		var first time.Time
		for i := 0; first.IsZero(); i++ {
			c, err := waitChunk(b, p, inv, i)
			if err != nil {
				b.Fatalf("stream ended before its first token: %v", err)
			}
			if strings.Contains(string(c.Data), `"type":"content"`) {
				first = c.At
			}
		}
		// The abort comes at a random phase of the turn's polling.
		time.Sleep(streamed + rand.N(time.Second))
		asked := time.Now()
		for _, c := range st.Dynamo.between(first, asked) {
			if c.Op == "GetItem" {
				reads++
			}
		}
		open += asked.Sub(first)
		if err := ds.RequestAbort(context.Background(), store.Key{ProjectID: "p1", UserID: "alice", ThreadID: sid}); err != nil {
			b.Fatal(err)
		}
		stored := time.Now()
		if _, err := inv.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		abortMS += float64(time.Since(stored).Microseconds()) / 1000
	}
	b.ReportMetric(reads/open.Seconds(), "abort-reads/s")
	b.ReportMetric(abortMS/float64(b.N), "ms/abort")
}
