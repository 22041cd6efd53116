package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/turnlog"
)

// TestTurnLogWrites2000Tokens counts, on dynalite, what the turn log adds
// to a streamed turn of the chat-stream function whose answer is 2,000
// tokens: the same turn runs with TURN_LOG=off and on, and the DynamoDB
// requests and write capacity units of each are compared. The log writes
// a batch per 64 events or per 100 ms (whichever comes first), an empty
// marker first and an empty final batch when the last one was written
// already: the extra writes are bounded by that, whatever the speed of
// the machine; compressed, each costs one or two write capacity units.
func TestTurnLogWrites2000Tokens(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the chat-stream bootstrap")
	}
	st := newStack(t)
	st.Gate.hold = false
	st.Dynamo.mu.Lock()
	st.Dynamo.capacity = true
	st.Dynamo.mu.Unlock()
	tokens := make([]string, 2000)
	for i := range tokens {
		tokens[i] = fmt.Sprintf(" t%d", i)
	}
	type result struct {
		calls    []storeCall
		duration time.Duration
	}
	run := func(logOn string) result {
		env := st.env()
		env["TURN_LOG"] = logOn
		rt := lambdatest.NewRuntime(t, "chat-stream")
		p := lambdatest.StartBootstrap(t, bootstrapPath(t, "chat-stream"), rt, env)
		var out result
		for range 2 { // the first turn creates the table
			st.LLM.Enqueue(llmtest.Reply{Chunks: tokens}, llmtest.Reply{Text: "Title"})
			st.Gate.reset()
			start := time.Now()
			inv := rt.Invoke(streamEvent(t, "alice", uuid.NewString(), "count to 2000"), funcLimit)
			var got strings.Builder
			for i := 0; ; i++ {
				c, err := waitChunk(t, p, inv, i)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got.Write(c.Data)
			}
			if res, err := inv.Wait(context.Background()); err != nil || len(res.Error) > 0 {
				t.Fatalf("turn: %v %s", err, res.Error)
			}
			if n := strings.Count(got.String(), `"type":"content"`); n != len(tokens) {
				t.Fatalf("TURN_LOG=%s: %d content events, want %d", logOn, n, len(tokens))
			}
			out.duration = time.Since(start)
			time.Sleep(50 * time.Millisecond) // the title's write
			out.calls = st.Dynamo.between(inv.Taken(), time.Now())
		}
		return out
	}
	off, on := run("off"), run("on")
	costOff, costOn := costOf(off.calls), costOf(on.calls)
	t.Logf("2,000-token turn, TURN_LOG=off: %d requests, %.1f RCU, %.1f WCU: %s", costOff.Requests, costOff.RCU, costOff.WCU, opsWithUnits(off.calls))
	t.Logf("2,000-token turn, TURN_LOG=on:  %d requests, %.1f RCU, %.1f WCU: %s", costOn.Requests, costOn.RCU, costOn.WCU, opsWithUnits(on.calls))
	extra := costOn.Requests - costOff.Requests
	bound := len(tokens)/turnlog.DefaultMaxEvents + 1 + int(on.duration/turnlog.DefaultFlushEvery) + 3
	if extra <= 0 || extra > bound {
		t.Fatalf("the log added %d requests to a 2,000-token turn of %v, want 1..%d", extra, on.duration.Round(time.Millisecond), bound)
	}
	// Compressed, a batch of 64 token events fits in two kilobytes.
	if extraWCU := costOn.WCU - costOff.WCU; extraWCU > float64(2*bound) {
		t.Fatalf("the log added %.0f WCU to a 2,000-token turn, want at most %d (two per write)", extraWCU, 2*bound)
	}
}
