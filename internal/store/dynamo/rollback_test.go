package dynamo

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// turnMsgs returns n messages tagged as stored by turn, with contents
// "turn.1", "turn.2", ...
func turnMsgs(turn string, n int) []store.Message {
	out := make([]store.Message, n)
	for i := range out {
		out[i] = store.Message{Role: store.RoleAssistant, Content: fmt.Sprintf("%s.%d", turn, i+1),
			Metadata: map[string]any{store.MetadataTurnID: turn}}
	}
	return out
}

// appendOK appends msgs and fails the test on an error.
func appendOK(t *testing.T, s *Store, k store.Key, msgs []store.Message) []store.Message {
	t.Helper()
	out, err := s.AppendMessages(t.Context(), k, msgs)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return out
}

// rollBackOK rolls turn back and fails unless want messages went.
func rollBackOK(t *testing.T, s *Store, k store.Key, turn string, want int) {
	t.Helper()
	if n, err := s.RollBackTurn(t.Context(), k, turn); err != nil || n != want {
		t.Fatalf("RollBackTurn(%s) = %d, %v; want %d removed", turn, n, err, want)
	}
}

// wantConsistent fails unless the listed messages have the contents want,
// the voided ranges are disjoint, and msg_committed (when present) and the
// visible count of the commit state are their number.
func wantConsistent(t *testing.T, s *Store, k store.Key, what string, want string) {
	t.Helper()
	list, err := s.ListMessages(t.Context(), k, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range list {
		got = append(got, m.Content)
	}
	if strings.Join(got, ",") != want {
		t.Errorf("%s: messages %q, want %q", what, strings.Join(got, ","), want)
	}
	c, err := s.readCommit(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range c.gaps {
		for _, b := range c.gaps[i+1:] {
			if a[0] <= b[1] && b[0] <= a[1] {
				t.Errorf("%s: voided ranges %v and %v overlap (all: %v)", what, a, b, c.gaps)
			}
		}
	}
	if n := c.visibleCount(); n != int64(len(list)) {
		t.Errorf("%s: %d visible seqs, %d listed messages", what, n, len(list))
	}
	if n, ok := committedCount(t, s, k); c.counted && (!ok || n != int64(len(list))) {
		t.Errorf("%s: msg_committed %d, %d listed messages", what, n, len(list))
	}
}

// itemsBetween counts the message and part items of the session with a
// seq in [lo, hi].
func itemsBetween(t *testing.T, s *Store, k store.Key, lo, hi int64) int {
	t.Helper()
	out, err := s.queryMessages(t.Context(), sessionPK(k.ProjectID, k.ThreadID), msgSK(lo), msgSK(hi)+"#~", 0, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// A rollback voids the run (never reusing its seqs), keeps the voided
// ranges disjoint around the gaps already there (a failed append's), keeps
// msg_committed equal to the visible messages through rollbacks and
// appends, lets the next lease reconcile message_count right, and deletes
// the voided items, parts of a large message included.
func TestRollBackVoidsTheRun(t *testing.T) {
	errWrite := errors.New("write failed by the test")
	var failWrites atomic.Bool
	s := newHookedStore(t, "", func(op string) error {
		if op != "PutItem" || !failWrites.Load() {
			return nil
		}
		return errWrite
	})
	s.log = slog.New(slog.DiscardHandler)
	ctx := t.Context()
	k := createSession(t, s)
	fail := func() {
		t.Helper()
		failWrites.Store(true)
		defer failWrites.Store(false)
		if _, err := s.AppendMessages(ctx, k, turnMsgs("lost", 2)); !errors.Is(err, errWrite) {
			t.Fatalf("AppendMessages with failing writes: %v", err)
		}
	}
	appendOK(t, s, k, turnMsgs("A", 2))
	b := turnMsgs("B", 4)
	b[1].Content = strings.Repeat("x", 700<<10) + "B.2" // stored in parts
	first := appendOK(t, s, k, b[:1])[0].Seq
	fail() // a voided range inside B's run
	appendOK(t, s, k, b[1:])
	fail() // and one at its end
	before, err := s.readCommit(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.gaps) != 2 {
		t.Fatalf("gaps before the rollback: %v, want 2", before.gaps)
	}
	if err := s.AddTurnStats(ctx, k, store.TurnStats{Messages: 6}); err != nil {
		t.Fatal(err)
	}

	rollBackOK(t, s, k, "B", 4)
	wantConsistent(t, s, k, "after B's rollback", "A.1,A.2")
	if n := itemsBetween(t, s, k, first, before.seq); n != 0 {
		t.Errorf("%d items left in the voided seqs %d..%d", n, first, before.seq)
	}
	wantReconciled(t, s, k, "C", 2)

	// C's messages take new seqs, and go the same way.
	c := appendOK(t, s, k, turnMsgs("C", 3))
	if c[0].Seq <= before.seq {
		t.Errorf("C's first message at seq %d, at or below the voided %d", c[0].Seq, before.seq)
	}
	wantConsistent(t, s, k, "after C's append", "A.1,A.2,C.1,C.2,C.3")
	wantReconciled(t, s, k, "D", 5)
	rollBackOK(t, s, k, "C", 3)
	wantConsistent(t, s, k, "after C's rollback", "A.1,A.2")
	wantReconciled(t, s, k, "E", 2)
	appendOK(t, s, k, turnMsgs("E", 1))
	wantConsistent(t, s, k, "after E's append", "A.1,A.2,E.1")
	wantReconciled(t, s, k, "F", 3)
}

// A session whose meta item has no msg_committed (written before the
// counter) keeps none through a rollback; the next commit starts it from
// the visible seqs, the rolled-back ones excluded.
func TestRollBackWithoutCommittedCount(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	k := createSession(t, s)
	appendOK(t, s, k, turnMsgs("A", 2))
	appendOK(t, s, k, turnMsgs("B", 3))
	e := newExpr()
	e.remove(aMsgCommitted)
	if err := s.updateLease(ctx, k, e, ""); err != nil {
		t.Fatalf("remove msg_committed: %v", err)
	}
	rollBackOK(t, s, k, "B", 3)
	if n, ok := committedCount(t, s, k); ok {
		t.Errorf("msg_committed %d after a rollback on a session without it", n)
	}
	wantConsistent(t, s, k, "after the rollback", "A.1,A.2")
	appendOK(t, s, k, turnMsgs("C", 1))
	if n, ok := committedCount(t, s, k); !ok || n != 3 {
		t.Errorf("msg_committed %d (present %v) after the next commit, want 3", n, ok)
	}
	wantReconciled(t, s, k, "D", 3)
}

// A run longer than the first page read is removed whole.
func TestRollBackLongRun(t *testing.T) {
	s := newTestStore(t)
	k := createSession(t, s)
	appendOK(t, s, k, turnMsgs("A", 1))
	for range 5 {
		appendOK(t, s, k, turnMsgs("B", rollbackPage))
	}
	rollBackOK(t, s, k, "B", 5*rollbackPage)
	wantConsistent(t, s, k, "after the rollback", "A.1")
}

// A change of the session between the rollback's read and its update
// fails the update's condition; the rollback reads again and removes what
// is then the run.
func TestRollBackRetriesOnConcurrentChange(t *testing.T) {
	s := newTestStore(t)
	k := createSession(t, s)
	var changed atomic.Int32
	hooked := newObservedStore(t, s.table, func(op string, in any) error {
		u, ok := in.(*dynamodb.UpdateItemInput)
		if op != "UpdateItem" || !ok || !strings.Contains(aws.ToString(u.ConditionExpression), "size(") {
			return nil
		}
		switch changed.Add(1) {
		case 1: // a message of the turn committed meanwhile
			_, err := s.AppendMessages(t.Context(), k, turnMsgs("B", 1))
			return err
		case 2: // a count
			return s.AddTurnStats(t.Context(), k, store.TurnStats{Messages: 1})
		}
		return nil
	}, nil)
	appendOK(t, s, k, turnMsgs("A", 2))
	appendOK(t, s, k, turnMsgs("B", 3))
	if err := s.AddTurnStats(t.Context(), k, store.TurnStats{Messages: 5}); err != nil {
		t.Fatal(err)
	}
	rollBackOK(t, hooked, k, "B", 4)
	if got := changed.Load(); got != 3 {
		t.Errorf("%d conditional updates, want 3 (two failed)", got)
	}
	wantConsistent(t, s, k, "after the rollback", "A.1,A.2")
	sess, err := s.GetSession(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	if sess.MessageCount != 2 { // 5 + 1 counted - 4 removed
		t.Errorf("MessageCount %d, want 2", sess.MessageCount)
	}
}
