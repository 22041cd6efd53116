package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/lambdaapp/lambdatest"
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
