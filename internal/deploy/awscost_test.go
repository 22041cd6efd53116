package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/store"
	"agentchat/internal/store/dynamo"
	"agentchat/internal/store/storetest"
)

// capacityOps are the operations that accept ReturnConsumedCapacity.
var capacityOps = map[string]bool{
	"GetItem": true, "PutItem": true, "UpdateItem": true, "DeleteItem": true, "Query": true, "Scan": true,
	"BatchGetItem": true, "BatchWriteItem": true, "TransactGetItems": true, "TransactWriteItems": true,
}

// askCapacity returns r with ReturnConsumedCapacity TOTAL added to its
// JSON body when its operation accepts it, and the read units the request
// is billed at least (readMinimum). dynalite does not check the request
// signature that the change invalidates.
func askCapacity(tb testing.TB, r *http.Request) (*http.Request, float64) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	if !capacityOps[op] {
		return r, 0
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		tb.Errorf("read a DynamoDB request: %v", err)
		return r, 0
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		tb.Errorf("a %s request is not JSON: %v", op, err)
		r.Body = io.NopCloser(bytes.NewReader(body))
		return r, 0
	}
	least := readMinimum(op, m["ConsistentRead"])
	m["ReturnConsumedCapacity"] = json.RawMessage(`"TOTAL"`)
	body, _ = json.Marshal(m)
	r2 := r.Clone(r.Context())
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r2.Header.Set("Content-Length", fmt.Sprint(len(body)))
	return r2, least
}

// readMinimum is what DynamoDB bills at least for one read of op with
// the request's ConsistentRead value: "Queries that do not return results
// consume the minimum number of read capacity units for that type of read
// operation" (Query and Scan in the API reference), half a unit
// eventually consistent and one strongly consistent, and a GetItem reads
// its item's size rounded up to the next 4 KB, one unit at least (one
// that finds nothing included). dynalite reports nothing for a read that
// finds nothing, so the benchmark counts this minimum for it.
func readMinimum(op string, consistent json.RawMessage) float64 {
	switch op {
	case "GetItem", "Query", "Scan":
	default:
		return 0
	}
	if string(bytes.TrimSpace(consistent)) == "true" {
		return 1
	}
	return 0.5
}

func TestReadMinimum(t *testing.T) {
	cases := []struct {
		op         string
		consistent string
		want       float64
	}{
		{"Query", "", 0.5},
		{"Query", "false", 0.5},
		{"Query", "true", 1},
		{"GetItem", "true", 1},
		{"GetItem", "", 0.5},
		{"Scan", " true", 1},
		{"PutItem", "true", 0},
		{"BatchGetItem", "true", 0},
	}
	for _, c := range cases {
		var raw json.RawMessage
		if c.consistent != "" {
			raw = json.RawMessage(c.consistent)
		}
		if got := readMinimum(c.op, raw); got != c.want {
			t.Errorf("%s ConsistentRead %q: %v, want %v", c.op, c.consistent, got, c.want)
		}
	}
}

// consumedCapacity sums the capacity units of a DynamoDB answer (one
// ConsumedCapacity object, or a list for batch and transaction calls),
// counted as reads or writes by the operation.
func consumedCapacity(op string, body []byte) (rcu, wcu float64) {
	var answer struct {
		ConsumedCapacity json.RawMessage
	}
	if json.Unmarshal(body, &answer) != nil || len(answer.ConsumedCapacity) == 0 {
		return 0, 0
	}
	type units struct{ CapacityUnits, ReadCapacityUnits, WriteCapacityUnits float64 }
	var list []units
	if json.Unmarshal(answer.ConsumedCapacity, &list) != nil {
		var one units
		if json.Unmarshal(answer.ConsumedCapacity, &one) != nil {
			return 0, 0
		}
		list = []units{one}
	}
	read := op == "GetItem" || op == "Query" || op == "Scan" || op == "BatchGetItem" || op == "TransactGetItems"
	for _, u := range list {
		switch {
		case u.ReadCapacityUnits > 0 || u.WriteCapacityUnits > 0:
			rcu, wcu = rcu+u.ReadCapacityUnits, wcu+u.WriteCapacityUnits
		case read:
			rcu += u.CapacityUnits
		default:
			wcu += u.CapacityUnits
		}
	}
	return rcu, wcu
}

// failedConditionalWrite tells a write refused by its condition. DynamoDB
// bills it (the existing item's size, at least one unit: "Capacity unit
// consumption for write operations"); dynalite reports nothing for it, so
// the benchmark counts the minimum, one unit.
func failedConditionalWrite(op string, status int, body []byte) bool {
	write := op == "PutItem" || op == "UpdateItem" || op == "DeleteItem"
	return write && status == http.StatusBadRequest && bytes.Contains(body, []byte("ConditionalCheckFailedException"))
}

func TestFailedConditionalWrite(t *testing.T) {
	refused := `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`
	cases := []struct {
		op     string
		status int
		body   string
		want   bool
	}{
		{"UpdateItem", 400, refused, true},
		{"PutItem", 400, refused, true},
		{"DeleteItem", 400, refused, true},
		{"GetItem", 400, refused, false},
		{"UpdateItem", 200, `{}`, false},
		{"UpdateItem", 400, `{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException"}`, false},
	}
	for _, c := range cases {
		if got := failedConditionalWrite(c.op, c.status, []byte(c.body)); got != c.want {
			t.Errorf("%s %d %s: %v, want %v", c.op, c.status, c.body, got, c.want)
		}
	}
}

func TestConsumedCapacity(t *testing.T) {
	cases := []struct {
		op, body string
		rcu, wcu float64
	}{
		{"GetItem", `{"Item":{},"ConsumedCapacity":{"CapacityUnits":0.5,"TableName":"t"}}`, 0.5, 0},
		{"PutItem", `{"ConsumedCapacity":{"CapacityUnits":2,"TableName":"t"}}`, 0, 2},
		{"Query", `{"Items":[],"ConsumedCapacity":{"CapacityUnits":1.5}}`, 1.5, 0},
		{"BatchWriteItem", `{"ConsumedCapacity":[{"CapacityUnits":3},{"CapacityUnits":1}]}`, 0, 4},
		{"TransactWriteItems", `{"ConsumedCapacity":[{"CapacityUnits":4,"ReadCapacityUnits":0,"WriteCapacityUnits":4}]}`, 0, 4},
		{"GetItem", `{"Item":{}}`, 0, 0},
		{"GetItem", `not json`, 0, 0},
	}
	for _, c := range cases {
		rcu, wcu := consumedCapacity(c.op, []byte(c.body))
		if rcu != c.rcu || wcu != c.wcu {
			t.Errorf("%s %s: %v RCU %v WCU, want %v %v", c.op, c.body, rcu, wcu, c.rcu, c.wcu)
		}
	}
}

// cost is what a set of DynamoDB calls bills.
type cost struct {
	Requests int
	RCU, WCU float64
}

func costOf(calls []storeCall) cost {
	c := cost{Requests: len(calls)}
	for _, call := range calls {
		c.RCU += call.RCU
		c.WCU += call.WCU
	}
	return c
}

// BenchmarkAWSCost counts, on dynalite, the DynamoDB requests and the
// read and write capacity units that DynamoDB would bill (as dynalite
// computes them from item sizes) for: a new chat turn and a continuing
// one on sessions of 20 and 200 stored messages (through the chat-stream
// bootstrap under the fake Runtime API, a 1 KiB message and a short
// answer), a session list and a history read of a 200-message session
// (the handlers' default pages), and the removal of a project of 100
// sessions. It also reports the milliseconds a streamed turn is billed
// beyond the LLM's own time: from the event handed to the function to
// the end of the invocation, less the time from the first LLM request to
// the end of its answer.
func BenchmarkAWSCost(b *testing.B) {
	st := newStack(b)
	st.Gate.hold = false
	st.Dynamo.mu.Lock()
	st.Dynamo.capacity = true
	st.Dynamo.mu.Unlock()
	rt := lambdatest.NewRuntime(b, "chat-stream")
	p := lambdatest.StartBootstrap(b, bootstrapPath(b, "chat-stream"), rt, st.env())
	message := storetest.Question1KiB

	turn := func(b *testing.B, sid string) (calls []storeCall, billedBeyondLLM time.Duration) {
		st.Gate.reset()
		inv := rt.Invoke(streamEvent(b, "alice", sid, message), funcLimit)
		for i := 0; ; i++ {
			_, err := waitChunk(b, p, inv, i)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		res, err := inv.Wait(context.Background())
		if err != nil || len(res.Error) > 0 {
			b.Fatalf("turn: %v %s", err, res.Error)
		}
		end := time.Now()
		first, _ := st.Gate.state()
		llmEnd := st.Gate.lastAnswerEnd()
		// Writes the turn leaves behind (a title) may still be on
		// their way when the invocation ends: give them a moment.
		time.Sleep(50 * time.Millisecond)
		return st.Dynamo.between(inv.Taken(), time.Now()), end.Sub(inv.Taken()) - llmEnd.Sub(first)
	}
	ctx := context.Background()
	// The direct store writes fixtures and reads nothing through the
	// counter; the counted store makes the measured reads.
	direct := func(b *testing.B, endpoint string) *dynamo.Store {
		s, err := dynamo.New(ctx, dynamo.Options{TableName: st.Table, Endpoint: endpoint, Region: lambdatest.Region})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	// A first turn makes the function create the table.
	turn(b, uuid.NewString())
	fixtures, counted := direct(b, st.Direct), direct(b, st.Dynamo.URL)
	session := func(b *testing.B, project string, messages int) store.Key {
		k := store.Key{ProjectID: project, UserID: "alice", ThreadID: uuid.NewString()}
		now := time.Now().UTC()
		if err := fixtures.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID,
			Title: "fixture", CreatedAt: now, UpdatedAt: now}); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < messages; i += 2 {
			if _, err := fixtures.AppendMessages(ctx, k, []store.Message{
				{Role: "user", Content: message, CreatedAt: now},
				{Role: "assistant", Content: "Done: R1 now routes through R2.", CreatedAt: now}}); err != nil {
				b.Fatal(err)
			}
		}
		return k
	}
	measure := func(b *testing.B, op func(b *testing.B) []storeCall) {
		var total cost
		var last []storeCall
		for range b.N {
			last = op(b)
			c := costOf(last)
			total.Requests += c.Requests
			total.RCU += c.RCU
			total.WCU += c.WCU
		}
		n := float64(b.N)
		b.ReportMetric(float64(total.Requests)/n, "requests/op")
		b.ReportMetric(total.RCU/n, "RCU/op")
		b.ReportMetric(total.WCU/n, "WCU/op")
		b.Logf("%s: %s", b.Name(), opsWithUnits(last))
	}
	for _, history := range []int{0, 20, 200} {
		name := map[int]string{0: "new-turn", 20: "continuing-turn-20", 200: "continuing-turn-200"}[history]
		b.Run(name, func(b *testing.B) {
			var billed time.Duration
			measure(b, func(b *testing.B) []storeCall {
				b.StopTimer()
				sid := uuid.NewString()
				if history > 0 {
					sid = session(b, "p1", history).ThreadID
				}
				b.StartTimer()
				calls, beyond := turn(b, sid)
				billed += beyond
				return calls
			})
			b.ReportMetric(float64(billed.Microseconds())/1000/float64(b.N), "billed-ms-beyond-llm/op")
		})
	}
	b.Run("session-list", func(b *testing.B) {
		project := "list-" + uuid.NewString()[:8]
		for range 120 {
			session(b, project, 0)
		}
		b.ResetTimer()
		measure(b, func(b *testing.B) []storeCall {
			from := time.Now()
			if _, _, err := counted.ListSessions(ctx, project, "alice", store.Page{Limit: 100}); err != nil {
				b.Fatal(err)
			}
			return st.Dynamo.between(from, time.Now())
		})
	})
	b.Run("history-read-200", func(b *testing.B) {
		k := session(b, "p1", 200)
		b.ResetTimer()
		measure(b, func(b *testing.B) []storeCall {
			from := time.Now()
			if _, _, err := counted.ListHistory(ctx, k, store.HistoryPage{Limit: 100, MaxBytes: 4 << 20}); err != nil {
				b.Fatal(err)
			}
			return st.Dynamo.between(from, time.Now())
		})
	})
	b.Run("project-removal-100", func(b *testing.B) {
		measure(b, func(b *testing.B) []storeCall {
			b.StopTimer()
			project := "rm-" + uuid.NewString()[:8]
			for range 100 {
				session(b, project, 2)
			}
			b.StartTimer()
			from := time.Now()
			if err := counted.DeleteProject(ctx, project); err != nil {
				b.Fatal(err)
			}
			return st.Dynamo.between(from, time.Now())
		})
	})
}

// opsWithUnits lists calls in order as "Op(rcu/wcu)", or, past 40 calls,
// as a count and the units per operation.
func opsWithUnits(calls []storeCall) string {
	var s []string
	if len(calls) <= 40 {
		for _, c := range calls {
			s = append(s, fmt.Sprintf("%s(%g/%g)", c.Op, c.RCU, c.WCU))
		}
		return strings.Join(s, ", ")
	}
	type tally struct {
		n        int
		rcu, wcu float64
	}
	byOp := map[string]*tally{}
	var order []string
	for _, c := range calls {
		t := byOp[c.Op]
		if t == nil {
			t = &tally{}
			byOp[c.Op] = t
			order = append(order, c.Op)
		}
		t.n, t.rcu, t.wcu = t.n+1, t.rcu+c.RCU, t.wcu+c.WCU
	}
	for _, op := range order {
		t := byOp[op]
		s = append(s, fmt.Sprintf("%d×%s(%g/%g)", t.n, op, t.rcu, t.wcu))
	}
	return strings.Join(s, ", ")
}
