package dynamo

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// committedCount reads msg_committed; ok is false when the meta item has none.
func committedCount(t *testing.T, s *Store, k store.Key) (n int64, ok bool) {
	t.Helper()
	it, err := s.readMeta(t.Context(), k, aMsgCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := it[aMsgCommitted]; !ok {
		return 0, false
	}
	n, err = getN(it, aMsgCommitted)
	if err != nil {
		t.Fatal(err)
	}
	return n, true
}

// wantReconciled takes the lease for owner and checks that message_count
// is then want, the number of listed messages.
func wantReconciled(t *testing.T, s *Store, k store.Key, owner string, want int64) {
	t.Helper()
	if err := s.AcquireLease(t.Context(), k, owner, time.Minute); err != nil {
		t.Fatalf("AcquireLease(%s): %v", owner, err)
	}
	if err := s.ReleaseLease(t.Context(), k, owner); err != nil {
		t.Fatal(err)
	}
	sess, err := s.GetSession(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListMessages(t.Context(), k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sess.MessageCount != want || int64(len(list)) != want {
		t.Errorf("after AcquireLease(%s): message_count %d, %d listed messages; want %d", owner, sess.MessageCount, len(list), want)
	}
}

// msg_committed counts committed messages only: a dead append's skipped
// range, a failed append's voided one and the unused seqs of a retried
// reservation are not counted, and concurrent appends are each counted.
func TestCommittedCountFollowsVisibleMessages(t *testing.T) {
	var failWrites atomic.Bool
	errWrite := errors.New("write failed by the test")
	s := newHookedStore(t, "", func(op string) error {
		if op == "PutItem" && failWrites.Load() {
			return errWrite
		}
		return nil
	})
	s.stallTimeout = 100 * time.Millisecond
	s.log = slog.New(slog.DiscardHandler) // the skip is logged as a warning
	ctx := t.Context()
	k := createSession(t, s)
	if n, ok := committedCount(t, s, k); !ok || n != 0 {
		t.Fatalf("new session: msg_committed %d (present %v), want 0", n, ok)
	}
	first, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "a"}, {Role: store.RoleAssistant, Content: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	reserve(t, s, k, 2) // an append that died
	putRaw(t, s, k, first[1].Seq+1, "half-written")
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "c"}}); err != nil {
		t.Fatal(err)
	}
	failWrites.Store(true)
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "lost"}}); !errors.Is(err, errWrite) {
		t.Fatalf("AppendMessages with failing writes: %v", err)
	}
	failWrites.Store(false)
	// A stray item in the way makes the next append void its range and
	// reserve past it.
	c, err := s.readCommit(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, s, k, c.seq+1, "stray")
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "d"}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := committedCount(t, s, k); n != 4 {
		t.Errorf("msg_committed %d, want 4", n)
	}

	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 4 {
				if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: fmt.Sprint(w, "-", i)}}); err != nil {
					t.Errorf("append %d-%d: %v", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	if n, _ := committedCount(t, s, k); n != 28 {
		t.Errorf("msg_committed %d after concurrent appends, want 28", n)
	}
	wantReconciled(t, s, k, "A", 28)
}

// A meta item written before msg_committed existed gets the counter from
// its first commit, exactly (voided seqs excluded), and a session whose
// count drifted then (a turn cut before this version) is reconciled by the
// next lease.
func TestCommittedCountStartsOnOlderSession(t *testing.T) {
	s := newTestStore(t)
	s.stallTimeout = 100 * time.Millisecond
	s.log = slog.New(slog.DiscardHandler)
	ctx := t.Context()
	k := createSession(t, s)
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "a"}, {Role: store.RoleAssistant, Content: "b"}}); err != nil {
		t.Fatal(err)
	}
	reserve(t, s, k, 3) // a dead append, skipped by the next one
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "cut"}}); err != nil {
		t.Fatal(err)
	}
	// The turn of "cut" died: only the first turn was counted.
	if err := s.AddTurnStats(ctx, k, store.TurnStats{Messages: 2, Turns: 1}); err != nil {
		t.Fatal(err)
	}
	e := newExpr()
	e.remove(aMsgCommitted)
	if _, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression: aws.String(e.update()), ExpressionAttributeNames: e.names,
	}); err != nil {
		t.Fatalf("remove msg_committed: %v", err)
	}

	// Without the counter a lease leaves message_count alone.
	if err := s.AcquireLease(ctx, k, "A", time.Minute); err != nil {
		t.Fatal(err)
	}
	if sess, err := s.GetSession(ctx, k); err != nil || sess.MessageCount != 2 {
		t.Fatalf("message_count after a lease on an older session: %+v, %v; want 2", sess, err)
	}
	if err := s.ReleaseLease(ctx, k, "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "d"}}); err != nil {
		t.Fatal(err)
	}
	if n, ok := committedCount(t, s, k); !ok || n != 4 {
		t.Fatalf("msg_committed %d (present %v) after the first commit, want 4", n, ok)
	}
	wantReconciled(t, s, k, "B", 4)
}
