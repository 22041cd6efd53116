package dynamo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"agentchat/internal/store"
	"agentchat/internal/store/dynamo/dynalitetest"
	"agentchat/internal/store/storetest"
)

// endpoint is the dynalite shared by the tests of this package, started by
// TestMain (one emulator per package run, a fresh table per store).
var endpoint string

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	srv, err := dynalitetest.Launch(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamo tests need dynalite: %v\n", err)
		os.Exit(1)
	}
	endpoint = srv.Endpoint()
	code := m.Run()
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop dynalite: %v\n", err)
	}
	os.Exit(code)
}

// newTestStore returns a store on a fresh table, built through New (the
// production path: endpoint override, dummy credentials).
func newTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := New(context.Background(), Options{TableName: "t-" + uuid.NewString(), Endpoint: endpoint})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	createTable(t, s)
	return s
}

// newHookedStore returns a store on a fresh table whose client calls hook
// with the operation name before each request; an error from hook fails the
// request.
func newHookedStore(t testing.TB, table string, hook func(op string) error) *Store {
	t.Helper()
	return newObservedStore(t, table, func(op string, _ any) error { return hook(op) }, nil)
}

// newObservedStore returns a store on table (a fresh one if empty) whose
// client calls before (if not nil) with the operation name and input before
// each request, an error from it failing the request, and after (if not
// nil) once the request has been answered, with its error.
func newObservedStore(t testing.TB, table string, before func(op string, in any) error, after func(op string, in any, err error)) *Store {
	t.Helper()
	var answered func(op string, in, out any, err error) error
	if after != nil {
		answered = func(op string, in, _ any, err error) error { after(op, in, err); return nil }
	}
	return newAnswerStore(t, table, before, answered)
}

// newAnswerStore is newObservedStore whose after also gets the answer (a
// pointer to the operation's output, which it may change, as a replica
// behind would answer) and may replace it with an error (one that the
// request met on its way back, as a lost answer): it returns that error,
// or nil to keep the answer.
func newAnswerStore(t testing.TB, table string, before func(op string, in any) error, after func(op string, in, out any, err error) error) *Store {
	t.Helper()
	client := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("testHook",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					op := awsmiddleware.GetOperationName(ctx)
					if before != nil {
						if err := before(op, in.Parameters); err != nil {
							return middleware.InitializeOutput{}, middleware.Metadata{}, err
						}
					}
					out, md, err := next.HandleInitialize(ctx, in)
					if after != nil {
						if lost := after(op, in.Parameters, out.Result, err); lost != nil {
							return middleware.InitializeOutput{}, md, lost
						}
					}
					return out, md, err
				}), middleware.After)
		}},
	})
	if table == "" {
		table = "t-" + uuid.NewString()
	}
	s := NewFromClient(client, table)
	createTable(t, s)
	return s
}

// createTable creates the store's table and drops it when the test ends.
func createTable(t testing.TB, s *Store) {
	t.Helper()
	if err := s.CreateTable(context.Background()); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() {
		_, err := s.client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.table)})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			t.Errorf("delete table %s: %v", s.table, err)
		}
	})
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := newTestStore(t)
		c := new(storetest.Clock)
		s.clock = c.Now
		return storetest.WithClock(s, c)
	})
}

func TestLimits(t *testing.T) {
	storetest.RunLimits(t, func(t *testing.T, l store.Limits) store.Store {
		s, err := New(context.Background(), Options{TableName: "t-" + uuid.NewString(), Endpoint: endpoint, Limits: l})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		createTable(t, s)
		return s
	})
}

func TestCreateTableIdempotent(t *testing.T) {
	s := newTestStore(t)
	if err := s.CreateTable(t.Context()); err != nil {
		t.Fatalf("CreateTable on an existing table: %v", err)
	}
}

// scan returns every item of the table.
func scan(t *testing.T, s *Store) []item {
	t.Helper()
	var all []item
	var start item
	for {
		out, err := s.client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(s.table), ExclusiveStartKey: start})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		all = append(all, out.Items...)
		if start = out.LastEvaluatedKey; start == nil {
			return all
		}
	}
}

// ofProject reports whether it belongs to the project (a session's meta,
// message or part item).
func ofProject(it item, project string) bool {
	return strings.HasPrefix(getS(it, attrPK), "P#"+esc(project)+"#T#") || getS(it, attrGSI1PK) == projectGSI1PK(project)
}

// projectItems returns the keys of the project's items.
func projectItems(t *testing.T, s *Store, project string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, it := range scan(t, s) {
		if ofProject(it, project) {
			keys[getS(it, attrPK)+" "+getS(it, attrSK)] = true
		}
	}
	return keys
}

// fillProject creates sessions × msgs in the project, spread over three
// users, with a lease and an abort flag on every other session.
func fillProject(t *testing.T, s *Store, project string, sessions, msgs int) {
	t.Helper()
	ctx := t.Context()
	users := []string{"alice", "bob", "carol#1"}
	for i := range sessions {
		k := store.Key{ProjectID: project, UserID: users[i%len(users)], ThreadID: uuid.NewString()}
		if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		batch := make([]store.Message, msgs)
		for m := range batch {
			batch[m] = store.Message{Role: store.RoleUser, Content: fmt.Sprintf("%s message %d", k.ThreadID, m)}
		}
		if _, err := s.AppendMessages(ctx, k, batch); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		if i%2 == 0 {
			if err := s.AcquireLease(ctx, k, "turn", time.Hour); err != nil {
				t.Fatalf("AcquireLease: %v", err)
			}
			if err := s.RequestAbort(ctx, k); err != nil {
				t.Fatalf("RequestAbort: %v", err)
			}
		}
	}
}

// Acceptance of issue 4: removing a project with 50 sessions × 20 messages
// leaves no item of it, and another project (whose id has the first as a
// prefix) untouched.
func TestDeleteProjectLeavesNothing(t *testing.T) {
	s := newTestStore(t)
	const gone, kept = "lab", "lab#T#2"
	fillProject(t, s, gone, 50, 20)
	fillProject(t, s, kept, 3, 4)
	if n := len(projectItems(t, s, gone)); n != 50*21 {
		t.Fatalf("before removal: %d items of the project, want %d", n, 50*21)
	}
	keptBefore := projectItems(t, s, kept)
	if len(keptBefore) != 3*5 {
		t.Fatalf("before removal: %d items of the other project, want 15", len(keptBefore))
	}

	if err := s.DeleteProject(t.Context(), gone); err != nil {
		t.Fatalf("DeleteProject: %v", err)
	}
	if left := projectItems(t, s, gone); len(left) != 0 {
		t.Errorf("%d items of the removed project are left, e.g. %v", len(left), firstKey(left))
	}
	keptAfter := projectItems(t, s, kept)
	if len(keptAfter) != len(keptBefore) {
		t.Errorf("other project: %d items after removal, %d before", len(keptAfter), len(keptBefore))
	}
	for k := range keptBefore {
		if !keptAfter[k] {
			t.Errorf("other project lost item %s", k)
		}
	}
}

func firstKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

// Acceptance of issue 4: a removal cut off halfway (the connection fails
// after a number of item deletions) is finished by running it again, and the
// cut-off run leaves every partially removed thread findable (meta last).
func TestDeleteProjectResumes(t *testing.T) {
	const project = "lab"
	var deletes, cutAfter atomic.Int64
	cutAfter.Store(1 << 40)
	errCut := errors.New("connection cut by the test")
	cut := newHookedStore(t, "", func(op string) error {
		if op == "DeleteItem" && deletes.Add(1) > cutAfter.Load() {
			return errCut
		}
		return nil
	})
	fillProject(t, cut, project, 50, 20)
	before := len(projectItems(t, cut, project))

	deletes.Store(0)
	cutAfter.Store(300)
	err := cut.DeleteProject(t.Context(), project)
	if !errors.Is(err, errCut) {
		t.Fatalf("cut-off DeleteProject: error %v, want the cut", err)
	}
	left := projectItems(t, cut, project)
	if len(left) == 0 || len(left) >= before {
		t.Fatalf("cut-off run left %d of %d items, want some removed and some left", len(left), before)
	}
	// Every partition with items left still has its meta item, so that the
	// next run finds it through GSI1.
	for k := range left {
		pk, _, _ := strings.Cut(k, " ")
		if !left[pk+" "+metaSK] {
			t.Errorf("partition %s has items left but no meta item", pk)
		}
	}

	s := NewFromClient(cut.client, cut.table)
	cutAfter.Store(1 << 40)
	if err := s.DeleteProject(t.Context(), project); err != nil {
		t.Fatalf("second DeleteProject: %v", err)
	}
	if left := projectItems(t, s, project); len(left) != 0 {
		t.Errorf("after the second run, %d items are left, e.g. %s", len(left), firstKey(left))
	}
}

// A 1 MB tool output is stored in parts and read back intact, alone and
// among other messages.
func TestLargeToolOutputRoundTrip(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: uuid.NewString()}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	// Numbered lines with random text in them: compressed (to about half)
	// the body still takes part items.
	var b strings.Builder
	noise := randomText(1 << 20)
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "%06d %s é✓ \"quoted\" \\ \x01 line\n", i, noise[i*40%len(noise):][:40])
	}
	big := b.String()
	in := []store.Message{
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "c1", Type: "function", Function: store.FunctionCall{Name: "show", Arguments: "{}"}}}},
		{Role: store.RoleTool, Name: "show", ToolCallID: "c1", Content: big, Metadata: map[string]any{"bytes": float64(len(big))}},
		{Role: store.RoleAssistant, Content: "done"},
	}
	ret, err := s.AppendMessages(ctx, k, in)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	parts, declared, compressed := 0, int64(0), false
	for _, it := range scan(t, s) {
		switch {
		case strings.Contains(getS(it, attrSK), "#P"):
			parts++
		case getB(it, mBody) != nil:
			declared, _ = getN(it, mParts)
			compressed = getBool(it, mBodyDeflate)
		}
	}
	if parts < 1 || int64(parts) != declared || !compressed {
		t.Errorf("the 1 MB message is stored with %d part items (%d declared), compressed %v; want at least 1, compressed", parts, declared, compressed)
	}
	for _, limit := range []int{0, 2, 1} {
		got, err := s.ListMessages(ctx, k, limit)
		if err != nil {
			t.Fatalf("ListMessages(%d): %v", limit, err)
		}
		want := ret
		if limit > 0 {
			want = ret[len(ret)-limit:]
		}
		if len(got) != len(want) {
			t.Fatalf("ListMessages(%d): %d messages, want %d", limit, len(got), len(want))
		}
		for i := range got {
			w, g := want[i], got[i]
			if g.Seq != w.Seq || g.Content != w.Content || g.Name != w.Name || g.ToolCallID != w.ToolCallID ||
				len(g.ToolCalls) != len(w.ToolCalls) || fmt.Sprint(g.Metadata) != fmt.Sprint(w.Metadata) {
				t.Errorf("ListMessages(%d)[%d]: seq %d, %d content bytes, name %q, tool call %q, metadata %v; want seq %d, %d bytes, %q, %q, %v",
					limit, i, g.Seq, len(g.Content), g.Name, g.ToolCallID, g.Metadata, w.Seq, len(w.Content), w.Name, w.ToolCallID, w.Metadata)
			}
		}
	}
}

// createSession creates a session of alice in project p.
func createSession(t *testing.T, s *Store) store.Key {
	t.Helper()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: uuid.NewString()}
	if err := s.CreateSession(t.Context(), &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return k
}

// reserve simulates an append that reserved n seqs and died.
func reserve(t *testing.T, s *Store, k store.Key, n int64) {
	t.Helper()
	e := newExpr()
	e.add(aMsgReserved, avN(n))
	_, err := s.client.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression:          aws.String(e.update()),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil {
		t.Fatalf("reserve: %v", err)
	}
}

// putRaw writes a message item directly, as a dying or late append would.
func putRaw(t *testing.T, s *Store, k store.Key, seq int64, content string) {
	t.Helper()
	c, err := s.readCommit(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	items, err := messageItems(nil, sessionPK(k.ProjectID, k.ThreadID), c.epoch, "dead-writer",
		store.Message{Seq: seq, ID: uuid.NewString(), Role: store.RoleUser, Content: content, CreatedAt: now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: items[0]}); err != nil {
		t.Fatalf("put raw message: %v", err)
	}
}

func contents(ms []store.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Content
	}
	return out
}

// An append that reserved seqs and died (one of its two messages written)
// blocks later appends only for the stall timeout; its seqs are voided and
// its items never become visible, even if written later.
func TestAppendSkipsDeadAppend(t *testing.T) {
	s := newTestStore(t)
	s.stallTimeout = 100 * time.Millisecond
	s.log = slog.New(slog.DiscardHandler) // the skip is logged as a warning
	ctx := t.Context()
	k := createSession(t, s)
	first, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "before"}})
	if err != nil {
		t.Fatal(err)
	}
	reserve(t, s, k, 2)
	putRaw(t, s, k, first[0].Seq+1, "half-written")

	got, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "after"}})
	if err != nil {
		t.Fatalf("AppendMessages after a dead append: %v", err)
	}
	if got[0].Seq != first[0].Seq+3 {
		t.Errorf("Seq = %d, want %d (after the dead reservation)", got[0].Seq, first[0].Seq+3)
	}
	putRaw(t, s, k, first[0].Seq+2, "written too late")
	c, err := s.readCommit(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.advance(ctx, k, c.epoch, first[0].Seq, first[0].Seq+2, seqRange{1, 0}); !isConditionFailed(err) {
		t.Errorf("late commit of the dead append: %v, want a condition failure", err)
	}
	for _, limit := range []int{0, 1, 2, 3} {
		list, err := s.ListMessages(ctx, k, limit)
		if err != nil {
			t.Fatalf("ListMessages(%d): %v", limit, err)
		}
		want := []string{"before", "after"}
		if limit > 0 && limit < 2 {
			want = want[2-limit:]
		}
		if strings.Join(contents(list), ",") != strings.Join(want, ",") {
			t.Errorf("ListMessages(%d) = %q, want %q", limit, contents(list), want)
		}
	}
	if c, err = s.readCommit(ctx, k); err != nil {
		t.Fatal(err)
	}
	if len(c.gaps) != 1 || c.gaps[0] != [2]int64{first[0].Seq + 1, first[0].Seq + 2} {
		t.Errorf("gaps = %v, want the dead range", c.gaps)
	}
}

// An append whose write fails voids its own seqs at once: the next append
// does not wait for the stall timeout (here an hour; the test's context
// would end first).
func TestFailedAppendVoidsItself(t *testing.T) {
	var failWrites atomic.Bool
	errWrite := errors.New("write failed by the test")
	s := newHookedStore(t, "", func(op string) error {
		if op == "PutItem" && failWrites.Load() {
			return errWrite
		}
		return nil
	})
	s.stallTimeout = time.Hour
	k := createSession(t, s)
	failWrites.Store(true)
	if _, err := s.AppendMessages(t.Context(), k, []store.Message{{Role: store.RoleUser, Content: "lost"}}); !errors.Is(err, errWrite) {
		t.Fatalf("AppendMessages with failing writes: %v, want the write error", err)
	}
	failWrites.Store(false)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "kept"}}); err != nil {
		t.Fatalf("AppendMessages after a failed one: %v", err)
	}
	list, err := s.ListMessages(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(contents(list), ",") != "kept" {
		t.Errorf("messages = %q, want only the kept one", contents(list))
	}
}

// Ids containing the key separator cannot collide with other sessions.
func TestKeyEscaping(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	a := store.Key{ProjectID: "p#T#a", UserID: "u", ThreadID: "b"}
	b := store.Key{ProjectID: "p", UserID: "u", ThreadID: "a#T#b"}
	c := store.Key{ProjectID: "p", UserID: "u#PIN#1", ThreadID: "c"}
	for _, k := range []store.Key{a, b, c} {
		if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: k.ThreadID}); err != nil {
			t.Fatalf("CreateSession(%+v): %v", k, err)
		}
	}
	list, _, err := s.ListSessions(ctx, "p", "u", store.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ThreadID != "a#T#b" {
		t.Errorf("ListSessions(p, u) = %v, want only a#T#b", list)
	}
	if err := s.DeleteProject(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(ctx, a); err != nil || got.Title != "b" {
		t.Errorf("session of project p#T#a after deleting project p: %v, %v", got, err)
	}
}

// A cursor of another listing is rejected.
func TestCursorOfAnotherListing(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	for _, u := range []string{"alice", "alice", "bob", "bob"} {
		if err := s.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: u, ThreadID: uuid.NewString()}); err != nil {
			t.Fatal(err)
		}
	}
	_, next, err := s.ListSessions(ctx, "p", "alice", store.Page{Limit: 1})
	if err != nil || next == "" {
		t.Fatalf("ListSessions: cursor %q, %v", next, err)
	}
	for _, c := range []struct{ project, user string }{{"p", "bob"}, {"q", "alice"}} {
		_, _, err := s.ListSessions(ctx, c.project, c.user, store.Page{Limit: 1, Cursor: next})
		if !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("alice's cursor used by %s in %s: %v, want ErrInvalidCursor", c.user, c.project, err)
		}
	}
	for _, limit := range []int{0, -1, 1001} {
		if _, _, err := s.ListSessions(ctx, "p", "alice", store.Page{Limit: limit}); err == nil {
			t.Errorf("ListSessions(limit %d): no error", limit)
		}
	}
}

// BenchmarkTurnStart measures the store calls a turn makes before its first
// LLM token: read the session, take the lease, load the last 100 messages,
// append the user's message (and, after the turn, release the lease). It
// reports the DynamoDB requests per turn; ListMessages sends its two in
// parallel.
func BenchmarkTurnStart(b *testing.B) {
	var calls atomic.Int64
	s := newHookedStore(b, "", func(string) error { calls.Add(1); return nil })
	ctx := b.Context()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: uuid.NewString()}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		b.Fatal(err)
	}
	history := make([]store.Message, 20)
	for i := range history {
		history[i] = store.Message{Role: store.RoleUser, Content: strings.Repeat("history ", 50)}
	}
	if _, err := s.AppendMessages(ctx, k, history); err != nil {
		b.Fatal(err)
	}
	phases := []struct {
		name string
		run  func() error
	}{
		{"GetSession", func() error { _, err := s.GetSession(ctx, k); return err }},
		{"AcquireLease", func() error { return s.AcquireLease(ctx, k, "turn", time.Minute) }},
		{"ListMessages", func() error { _, err := s.ListMessages(ctx, k, 100); return err }},
		{"AppendMessages", func() error {
			_, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "next question"}})
			return err
		}},
		{"ReleaseLease", func() error { return s.ReleaseLease(ctx, k, "turn") }},
	}
	for _, p := range phases {
		b.Run(p.name, func(b *testing.B) {
			calls.Store(0)
			for b.Loop() {
				if err := p.run(); err != nil {
					b.Fatal(err)
				}
				if p.name == "AcquireLease" {
					if err := s.ReleaseLease(ctx, k, "turn"); err != nil {
						b.Fatal(err)
					}
					calls.Add(-1)
				}
			}
			b.ReportMetric(float64(calls.Load())/float64(b.N), "requests/op")
		})
	}
	b.Run("Turn", func(b *testing.B) {
		calls.Store(0)
		for b.Loop() {
			for _, p := range phases {
				if err := p.run(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(calls.Load())/float64(b.N), "requests/op")
	})
}

// stalledStore returns a store on table whose PutItem requests wait, once
// armed, until release is closed; reached is closed when the first one
// waits.
func stalledStore(t *testing.T, table string) (s *Store, arm func(), reached, release chan struct{}) {
	t.Helper()
	var armed atomic.Bool
	var once sync.Once
	reached, release = make(chan struct{}), make(chan struct{})
	s = newHookedStore(t, table, func(op string) error {
		if op == "PutItem" && armed.Load() {
			once.Do(func() { close(reached) })
			<-release
		}
		return nil
	})
	return s, func() { armed.Store(true) }, reached, release
}

// A stale append, in flight while its session is deleted and created again
// with the same thread id, can neither overwrite nor join the messages of
// the new session: its conditional puts fail on (or land beside) the new
// items, its commit fails on the epoch, and appends of the new session
// retry past any stray item it left. The new session's messages, large ones
// included, stay intact.
func TestStaleAppendAfterRecreate(t *testing.T) {
	large := func(tag string, size int) string { return tag + strings.Repeat("x", size) }
	tests := []struct {
		name string
		// before runs in the new session before the stale append resumes,
		// after once it has failed.
		before, after [][]store.Message
		// wantSeqs are the seqs of all the new session's messages.
		wantSeqs []int64
	}{
		{
			name: "new session committed the seqs first",
			before: [][]store.Message{{
				{Role: store.RoleUser, Content: "new-1"},
				{Role: store.RoleTool, Content: large("new-2", 400<<10)}, // one part item
				{Role: store.RoleAssistant, Content: "new-3"},
				{Role: store.RoleUser, Content: "new-4"},
			}},
			after:    [][]store.Message{{{Role: store.RoleUser, Content: "new-5"}}},
			wantSeqs: []int64{1, 2, 3, 4, 5},
		},
		{
			name:   "stale items landed first",
			before: [][]store.Message{{{Role: store.RoleUser, Content: "new-1"}}},
			after: [][]store.Message{
				{{Role: store.RoleUser, Content: "new-2"}}, // meets stray seq 2, retries past 3
				{{Role: store.RoleUser, Content: "new-3"}},
				{{Role: store.RoleUser, Content: "new-4"}, {Role: store.RoleAssistant, Content: "new-5"}},
			},
			wantSeqs: []int64{1, 4, 5, 6, 7},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := "t-" + uuid.NewString()
			stale, arm, reached, release := stalledStore(t, table)
			s, err := New(t.Context(), Options{TableName: table, Endpoint: endpoint}) // same table, no hook
			if err != nil {
				t.Fatal(err)
			}
			s.stallTimeout = time.Hour // a wait for a dead range would hang the test
			s.log = slog.New(slog.DiscardHandler)
			stale.log = s.log
			ctx := t.Context()
			k := createSession(t, s)
			if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "old"}}); err != nil {
				t.Fatal(err)
			}

			// The stale append reserves seqs 2..3 of the old session and
			// stalls before its puts.
			arm()
			staleErr := make(chan error, 1)
			go func() {
				_, err := stale.AppendMessages(ctx, k, []store.Message{
					{Role: store.RoleTool, Content: large("stale-1", 700<<10)}, // two part items
					{Role: store.RoleAssistant, Content: "stale-2"},
				})
				staleErr <- err
			}()
			<-reached
			if err := s.DeleteSession(ctx, k); err != nil {
				t.Fatalf("DeleteSession: %v", err)
			}
			if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
				t.Fatalf("CreateSession again: %v", err)
			}
			var want []store.Message
			appendAll := func(batches [][]store.Message) {
				for _, b := range batches {
					got, err := s.AppendMessages(ctx, k, b)
					if err != nil {
						t.Fatalf("AppendMessages in the new session: %v", err)
					}
					want = append(want, got...)
				}
			}
			appendAll(tc.before)
			close(release)
			if err := <-staleErr; !errors.Is(err, store.ErrNotFound) {
				t.Errorf("stale append: %v, want ErrNotFound", err)
			}
			appendAll(tc.after)

			got, err := s.ListMessages(ctx, k, 0)
			if err != nil {
				t.Fatalf("ListMessages: %v", err)
			}
			if len(got) != len(want) || len(got) != len(tc.wantSeqs) {
				t.Fatalf("ListMessages: %d messages, want %d (%d returned by the appends)", len(got), len(tc.wantSeqs), len(want))
			}
			for i := range got {
				if got[i].Seq != tc.wantSeqs[i] || want[i].Seq != tc.wantSeqs[i] || got[i].ID != want[i].ID || got[i].Content != want[i].Content {
					t.Errorf("message %d: seq %d (appended as %d), %.8q; want seq %d, %.8q",
						i, got[i].Seq, want[i].Seq, got[i].Content, tc.wantSeqs[i], want[i].Content)
				}
			}
			// The committed items themselves are the new session's.
			for _, it := range scan(t, s) {
				if getS(it, attrPK) != sessionPK(k.ProjectID, k.ThreadID) || getS(it, attrSK) == metaSK {
					continue
				}
				seq, part, _ := parseMsgSK(getS(it, attrSK))
				if part > 0 || !slices.Contains(tc.wantSeqs, seq) {
					continue
				}
				if strings.HasPrefix(getS(it, mContent), "stale") || strings.HasPrefix(string(getB(it, mBody)), `{"content":"stale`) {
					t.Errorf("committed item %s holds the stale append's message", getS(it, attrSK))
				}
			}
		})
	}
}

// A conditional put finding an item of its own append (a put the SDK
// retried after a lost answer) is no conflict; one of another append is,
// and leaves that item as it was.
func TestPutMessageItemConflict(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	k := createSession(t, s)
	pk := sessionPK(k.ProjectID, k.ThreadID)
	items, err := messageItems(nil, pk, "e", "w1", store.Message{Seq: 7, ID: "m", Role: store.RoleUser, Content: "first", CreatedAt: now()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := messageItems(nil, pk, "e", "w2", store.Message{Seq: 7, ID: "m2", Role: store.RoleUser, Content: "second", CreatedAt: now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		it           item
		wid          string
		wantConflict bool
	}{
		{"new key", items[0], "w1", false},
		{"own item again", items[0], "w1", false},
		{"other append's item", other[0], "w2", true},
	} {
		conflict, err := s.putMessageItem(ctx, c.it, c.wid)
		if err != nil || conflict != c.wantConflict {
			t.Errorf("%s: conflict %v, error %v; want conflict %v", c.name, conflict, err, c.wantConflict)
		}
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keyOf(pk, msgSK(7)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if getS(out.Item, mContent) != "first" || getS(out.Item, mWriter) != "w1" {
		t.Errorf("item after the conflicting put: content %q by %q, want the first one", getS(out.Item, mContent), getS(out.Item, mWriter))
	}
}

// The reader takes only the part items written by the append that wrote
// the message item: a stray part of another append is ignored when the
// message does not use its number and makes the read fail when it does
// (conditional puts keep that from happening to a committed message).
func TestCollectorPartWriters(t *testing.T) {
	pk := sessionPK("p", "t")
	content := randomText(600 << 10) // body in two chunks once compressed: one part item
	items, err := messageItems(nil, pk, "e", "w", store.Message{Seq: 1, ID: "m", Role: store.RoleTool, Content: content, CreatedAt: now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("%d items, want a message and one part", len(items))
	}
	msg, part := items[0], items[1]
	stray := func(n int) item {
		it := keyOf(pk, partSK(1, n))
		it[mWriter] = avS("stale")
		// The very chunk of the message's own part: it would decode, so
		// only its writer tells it apart.
		it[mBody] = &types.AttributeValueMemberB{Value: bytes.Clone(getB(part, mBody))}
		return it
	}
	for _, tc := range []struct {
		name    string
		items   []item // descending, as the query returns them
		wantErr bool
	}{
		{"own parts", []item{part, msg}, false},
		{"stray part beyond the message's", []item{stray(2), part, msg}, false},
		{"stray part in place of the message's", []item{stray(1), msg}, true},
	} {
		col := newCollector(nil, commitState{seq: 1, epoch: "e"}, 0)
		for _, it := range tc.items {
			col.add(it)
		}
		got := col.result()
		switch {
		case tc.wantErr && col.broken == nil:
			t.Errorf("%s: read %d messages, want an error", tc.name, len(got))
		case !tc.wantErr && (col.broken != nil || len(got) != 1 || got[0].Content != content):
			t.Errorf("%s: %d messages, error %v; want the message intact", tc.name, len(got), col.broken)
		}
	}
}
