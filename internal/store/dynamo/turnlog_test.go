package dynamo

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func TestTurnLogs(t *testing.T) {
	storetest.RunTurnLogs(t, func(t *testing.T) store.Store {
		s := newTestStore(t)
		c := new(storetest.Clock)
		s.clock = c.Now
		return storetest.WithClock(s, c)
	})
}

// newTurn returns a UUIDv7 turn id.
func newTurn(t *testing.T) string {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// turnBatch returns events first..first+n-1.
func turnBatch(first, n int64) [][]byte {
	evs := make([][]byte, n)
	for i := range evs {
		evs[i] = fmt.Appendf(nil, `{"type":"delta","n":%d}`, first+int64(i))
	}
	return evs
}

// A turn costs one write request per batch and one read of the meta item;
// a poll after the last event costs one Query and the read of the meta
// item.
func TestTurnLogRequests(t *testing.T) {
	var mu sync.Mutex
	ops := map[string]int{}
	s := newObservedStore(t, "", func(op string, _ any) error {
		mu.Lock()
		defer mu.Unlock()
		ops[op]++
		return nil
	}, nil)
	taken := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		o := ops
		ops = map[string]int{}
		return o
	}
	ctx := t.Context()
	k := createSession(t, s)
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	appendTurn := func(turn string, first int64, evs [][]byte, final bool) {
		t.Helper()
		if err := s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: turn, First: first, Events: evs, Final: final}, store.TurnLogKeep); err != nil {
			t.Fatalf("AppendTurnEvents(%d, %d events): %v", first, len(evs), err)
		}
	}

	const total, size = 2000, 64
	taken()
	turn := newTurn(t)
	appendTurn(turn, 1, nil, false)
	batches := 1
	for first := int64(1); first <= total; first += size {
		n := min(size, total-first+1)
		appendTurn(turn, first, turnBatch(first, n), first+n > total)
		batches++
	}
	got := taken()
	if w := got["PutItem"] + got["UpdateItem"] + got["BatchWriteItem"]; w != batches || got["GetItem"] != 1 || len(got) != 3 {
		t.Errorf("requests of a turn of %d batches: %v; want %d writes (PutItem, UpdateItem) and 1 GetItem", batches, got, batches)
	}

	ev, err := s.ReadTurnEvents(ctx, k, turn, total)
	if err != nil || ev.Turn != turn || len(ev.Events) != 0 || !ev.Final {
		t.Fatalf("read after the last event: %+v, %v; want the turn, final, no events", ev, err)
	}
	if got := taken(); got["Query"] != 1 || got["GetItem"] != 1 || len(got) != 2 {
		t.Errorf("requests of a read after the last event: %v; want 1 Query and 1 GetItem", got)
	}
	ev, err = s.ReadTurnEvents(ctx, k, turn, 0)
	if err != nil || len(ev.Events) != total || !ev.Final || string(ev.Events[total-1]) != string(turnBatch(total, 1)[0]) {
		t.Fatalf("read of the whole turn: %d events, final %v, %v", len(ev.Events), ev.Final, err)
	}

	// A batch larger than an item is one BatchWriteItem of its parts
	// (random bytes: a compressed batch would fit in one item).
	taken()
	large := newTurn(t)
	noise := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	appendTurn(large, 1, [][]byte{noise}, true)
	if got := taken(); got["BatchWriteItem"] != 1 || got["GetItem"] != 1 || len(got) != 2 {
		t.Errorf("requests of a 1 MiB batch: %v; want 1 BatchWriteItem and 1 GetItem", got)
	}

	// A session without messages has no epoch yet: the turn's first batch
	// gives it one (one more write).
	k2 := createSession(t, s)
	taken()
	if err := s.AppendTurnEvents(ctx, k2, store.TurnEvents{Turn: newTurn(t), First: 1, Events: turnBatch(1, 3)}, store.TurnLogKeep); err != nil {
		t.Fatal(err)
	}
	if got := taken(); got["PutItem"] != 1 || got["UpdateItem"] != 1 || got["GetItem"] != 1 || len(got) != 3 {
		t.Errorf("requests of the first batch on a session without an epoch: %v; want PutItem, UpdateItem and GetItem once each", got)
	}
}

// A turn that goes on after its session was deleted writes strays of the
// old epoch: the session created again with the same ids never reads them,
// even when a stray is the partition's latest turn item, and its deletion
// removes them.
func TestTurnLogStrays(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	k := createSession(t, s)
	turn := newTurn(t)
	if err := s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: turn, First: 1, Events: turnBatch(1, 2)}, store.TurnLogKeep); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	mine := newTurn(t)
	if err := s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: mine, First: 1, Events: turnBatch(1, 1), Final: true}, store.TurnLogKeep); err != nil {
		t.Fatal(err)
	}
	// The old turn goes on (its epoch is cached), and a stray is latest.
	stray := store.TurnEvents{Turn: turn, First: 3, Events: turnBatch(3, 1), Final: true}
	if err := s.AppendTurnEvents(ctx, k, stray, store.TurnLogKeep); err != nil {
		t.Fatalf("append of the old turn: %v", err)
	}
	late := newTurn(t) // sorts after mine
	s.turnEpochs.put(sessionPK(k.ProjectID, k.ThreadID)+"\x00"+late, "old-epoch")
	if err := s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: late, First: 1}, store.TurnLogKeep); err != nil {
		t.Fatal(err)
	}
	if ev, err := s.ReadTurnEvents(ctx, k, "", 0); err != nil || ev.Turn != "" {
		t.Errorf("latest turn with a stray latest: %+v, %v; want no log", ev, err)
	}
	for _, tc := range []struct {
		turn string
		want int
	}{{turn, 0}, {late, 0}, {mine, 1}} {
		ev, err := s.ReadTurnEvents(ctx, k, tc.turn, 0)
		if err != nil || len(ev.Events) != tc.want || (tc.want == 0) != (ev.Turn == "") {
			t.Errorf("turn %s: %+v, %v; want %d events", tc.turn, ev, err, tc.want)
		}
	}
	if err := s.DeleteSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	for _, it := range scan(t, s) {
		if strings.HasPrefix(getS(it, attrSK), turnPrefix) {
			t.Errorf("item %s left after the deletion", getS(it, attrSK))
		}
	}
}

func TestTurnSK(t *testing.T) {
	for _, turn := range []string{"0190-abc", "a#b%c", "%23"} {
		sk := turnSK(turn, 42, tailPart)
		got, last, part, err := parseTurnSK(sk)
		if err != nil || got != turn || last != 42 || part != tailPart {
			t.Errorf("parseTurnSK(%q) = %q, %d, %d, %v; want %q, 42, %d", sk, got, last, part, err, turn, tailPart)
		}
		if !(sk < turnSKEnd(turn)) || !(metaSK < sk) {
			t.Errorf("%q does not sort between %q and %q", sk, metaSK, turnSKEnd(turn))
		}
	}
	for _, bad := range []string{"TURN#x", "TURN#x#12#99", "MSG#0000000001", "TURN#x#00000000ab#99"} {
		if _, _, _, err := parseTurnSK(bad); err == nil {
			t.Errorf("parseTurnSK(%q): no error", bad)
		}
	}
}
