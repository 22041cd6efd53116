package storetest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// RunTurnLogs runs the conformance tests of store.TurnLogs against stores
// made by newStore (fresh stores, returned through WithClock).
func RunTurnLogs(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"TurnLogRoundTrip", testTurnLogRoundTrip},
		{"TurnLogMarker", testTurnLogMarker},
		{"TurnLogEmptyFinal", testTurnLogEmptyFinal},
		{"TurnLogPaging", testTurnLogPaging},
		{"TurnLogLargeEvent", testTurnLogLargeEvent},
		{"TurnLogLatestTurn", testTurnLogLatestTurn},
		{"TurnLogLive", testTurnLogLive},
		{"TurnLogOwnership", testTurnLogOwnership},
		{"TurnLogDelete", testTurnLogDelete},
		{"TurnLogExpiry", testTurnLogExpiry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// newTurnID returns a turn id as the agent makes them (UUIDv7: later ids
// sort after earlier ones).
func newTurnID(t *testing.T) string {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatalf("uuid.NewV7: %v", err)
	}
	return id.String()
}

// events returns the payloads of events first..last (a small JSON each).
func events(first, last int64) [][]byte {
	var out [][]byte
	for n := first; n <= last; n++ {
		out = append(out, fmt.Appendf(nil, `{"type":"delta","n":%d}`, n))
	}
	return out
}

// appendTurn appends a batch of turn to k's log, kept store.TurnLogKeep.
func appendTurn(t *testing.T, s store.Store, k store.Key, turn string, first int64, evs [][]byte, final bool) {
	t.Helper()
	ev := store.TurnEvents{Turn: turn, First: first, Events: evs, Final: final}
	noErr(t, fmt.Sprintf("AppendTurnEvents(%d, %d events, final %v)", first, len(evs), final), s.AppendTurnEvents(t.Context(), k, ev, store.TurnLogKeep))
}

// readTurn reads k's log of turn after after.
func readTurn(t *testing.T, s store.Store, k store.Key, turn string, after int64) *store.TurnEvents {
	t.Helper()
	got, err := s.ReadTurnEvents(t.Context(), k, turn, after)
	if err != nil {
		t.Fatalf("ReadTurnEvents(%q, %d): %v", turn, after, err)
	}
	if got == nil {
		t.Fatalf("ReadTurnEvents(%q, %d) returned nil and no error", turn, after)
	}
	return got
}

// wantTurn fails unless got is turn's events from first on, with the final
// and live flags given (first is not checked when want has no events).
func wantTurn(t *testing.T, what string, got *store.TurnEvents, turn string, first int64, want [][]byte, final, live bool) {
	t.Helper()
	if got.Turn != turn || got.Final != final || got.Live != live || len(got.Events) != len(want) || (len(want) > 0 && got.First != first) {
		t.Fatalf("%s: turn %q first %d, %d events, final %v, live %v; want turn %q first %d, %d events, final %v, live %v",
			what, got.Turn, got.First, len(got.Events), got.Final, got.Live, turn, first, len(want), final, live)
	}
	for i := range want {
		if !bytes.Equal(got.Events[i], want[i]) {
			t.Fatalf("%s: event %d = %.80q (%d bytes), want %.80q (%d bytes)", what, first+int64(i), got.Events[i], len(got.Events[i]), want[i], len(want[i]))
		}
	}
}

// testTurnLogRoundTrip: batches come back in order, from any event on,
// across batch boundaries, an empty event included; Final is set by the
// final batch, also when nothing follows the reader's last event.
func testTurnLogRoundTrip(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	turn := newTurnID(t)
	all := events(1, 7)
	all[4] = []byte{} // event 5 is empty
	appendTurn(t, s, k, turn, 1, nil, false)
	appendTurn(t, s, k, turn, 1, all[0:3], false)
	appendTurn(t, s, k, turn, 4, all[3:5], false)
	wantTurn(t, "before the final batch", readTurn(t, s, k, turn, 0), turn, 1, all[:5], false, false)
	appendTurn(t, s, k, turn, 6, all[5:7], true)
	for _, after := range []int64{0, 1, 2, 3, 4, 5, 6} {
		wantTurn(t, fmt.Sprintf("after %d", after), readTurn(t, s, k, turn, after), turn, after+1, all[after:], true, false)
	}
	wantTurn(t, "latest turn", readTurn(t, s, k, "", 0), turn, 1, all, true, false)
	wantTurn(t, "after the final event", readTurn(t, s, k, turn, 7), turn, 8, nil, true, false)
	wantTurn(t, "after an event never logged", readTurn(t, s, k, turn, 9), turn, 10, nil, true, false)
	wantTurn(t, "another turn id", readTurn(t, s, k, newTurnID(t), 0), "", 0, nil, false, false)
}

// testTurnLogMarker: a turn's first batch may hold no events; it makes the
// turn the session's latest, with nothing to read yet.
func testTurnLogMarker(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	wantTurn(t, "no log", readTurn(t, s, k, "", 0), "", 0, nil, false, false)
	turn := newTurnID(t)
	appendTurn(t, s, k, turn, 1, nil, false)
	wantTurn(t, "latest after the marker", readTurn(t, s, k, "", 0), turn, 1, nil, false, false)
	wantTurn(t, "the turn after the marker", readTurn(t, s, k, turn, 0), turn, 1, nil, false, false)
	appendTurn(t, s, k, turn, 1, events(1, 2), false)
	wantTurn(t, "after the first events", readTurn(t, s, k, "", 0), turn, 1, events(1, 2), false, false)
	// A reader ahead of the log (it got events 3..5 live): the turn is
	// there, nothing to read yet, not over.
	wantTurn(t, "ahead of the log", readTurn(t, s, k, turn, 5), turn, 6, nil, false, false)
	wantTurn(t, "latest, ahead of the log", readTurn(t, s, k, "", 5), turn, 6, nil, false, false)
}

// testTurnLogEmptyFinal: a turn may end with a Final batch without events.
func testTurnLogEmptyFinal(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	turn := newTurnID(t)
	appendTurn(t, s, k, turn, 1, nil, false)
	appendTurn(t, s, k, turn, 1, events(1, 3), false)
	appendTurn(t, s, k, turn, 4, nil, true)
	wantTurn(t, "from the start", readTurn(t, s, k, turn, 0), turn, 1, events(1, 3), true, false)
	wantTurn(t, "after event 1", readTurn(t, s, k, turn, 1), turn, 2, events(2, 3), true, false)
	wantTurn(t, "after the last event", readTurn(t, s, k, turn, 3), turn, 4, nil, true, false)

	// A turn that ends without any event.
	empty := newTurnID(t)
	appendTurn(t, s, k, empty, 1, nil, false)
	appendTurn(t, s, k, empty, 1, nil, true)
	wantTurn(t, "a turn without events", readTurn(t, s, k, "", 0), empty, 1, nil, true, false)
}

// big returns an event of n bytes, different for each seed.
func big(n int, seed byte) []byte {
	b := bytes.Repeat([]byte{'a' + seed%26}, n)
	b[0], b[n-1] = '{', seed
	return b
}

// testTurnLogPaging: a read returns at most about store.MaxTurnEventsRead
// bytes (at least one event), whether the events are in one batch or in
// several; the next read goes on from the last event returned.
func testTurnLogPaging(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	const size = 600 << 10
	turn := newTurnID(t)
	one := [][]byte{big(size, 1), big(size, 2), big(size, 3)}
	appendTurn(t, s, k, turn, 1, one, true)
	wantTurn(t, "one batch, after 0", readTurn(t, s, k, turn, 0), turn, 1, one[0:1], false, false)
	wantTurn(t, "one batch, after 1", readTurn(t, s, k, turn, 1), turn, 2, one[1:2], false, false)
	wantTurn(t, "one batch, after 2", readTurn(t, s, k, turn, 2), turn, 3, one[2:3], true, false)

	// Ten batches of one 300 KiB event: three per read.
	turn = newTurnID(t)
	var many [][]byte
	for i := range 10 {
		many = append(many, big(300<<10, byte(i)))
		appendTurn(t, s, k, turn, int64(i+1), many[i:i+1], i == 9)
	}
	var after int64
	for after < 10 {
		got := readTurn(t, s, k, turn, after)
		n := min(int64(len(got.Events)), 10-after)
		if n == 0 {
			t.Fatalf("many batches, after %d: no events", after)
		}
		wantTurn(t, fmt.Sprintf("many batches, after %d", after), got, turn, after+1, many[after:after+n], after+n == 10, false)
		if after+n < 10 && n != 3 {
			t.Errorf("many batches, after %d: %d events of 300 KiB, want 3 (at most %d bytes)", after, n, store.MaxTurnEventsRead)
		}
		after += n
	}
}

// testTurnLogLargeEvent: an event of 4 MiB comes back whole.
func testTurnLogLargeEvent(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	turn := newTurnID(t)
	huge := big(4<<20, 7)
	appendTurn(t, s, k, turn, 1, [][]byte{huge}, false)
	appendTurn(t, s, k, turn, 2, events(2, 3), true)
	wantTurn(t, "the large event", readTurn(t, s, k, turn, 0), turn, 1, [][]byte{huge}, false, false)
	wantTurn(t, "after the large event", readTurn(t, s, k, turn, 1), turn, 2, events(2, 3), true, false)
}

// testTurnLogLatestTurn: turn "" reads the turn with the greatest id;
// an earlier turn is still read by its id.
func testTurnLogLatestTurn(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	first, second := newTurnID(t), newTurnID(t)
	appendTurn(t, s, k, first, 1, events(1, 4), true)
	wantTurn(t, "latest of one turn", readTurn(t, s, k, "", 0), first, 1, events(1, 4), true, false)
	appendTurn(t, s, k, second, 1, nil, false)
	appendTurn(t, s, k, second, 1, events(1, 2), false)
	wantTurn(t, "latest of two turns", readTurn(t, s, k, "", 0), second, 1, events(1, 2), false, false)
	wantTurn(t, "the first turn", readTurn(t, s, k, first, 2), first, 3, events(3, 4), true, false)

	// Another session's log is its own.
	other := newKey(k.ProjectID, "alice")
	create(t, s, other, nil)
	wantTurn(t, "another session", readTurn(t, s, other, "", 0), "", 0, nil, false, false)
	wantTurn(t, "the turn of another session", readTurn(t, s, other, first, 0), "", 0, nil, false, false)
}

// testTurnLogLive: Live while the turn holds the session's lease, and only
// then.
func testTurnLogLive(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	turn := newTurnID(t)
	noErr(t, "AcquireLease(turn)", s.AcquireLease(ctx, k, turn, time.Minute))
	appendTurn(t, s, k, turn, 1, events(1, 2), false)
	wantTurn(t, "while the turn holds the lease", readTurn(t, s, k, "", 0), turn, 1, events(1, 2), false, true)
	wantTurn(t, "by id while it holds the lease", readTurn(t, s, k, turn, 2), turn, 3, nil, false, true)
	noErr(t, "ReleaseLease(turn)", s.ReleaseLease(ctx, k, turn))
	wantTurn(t, "after the release", readTurn(t, s, k, turn, 0), turn, 1, events(1, 2), false, false)

	// A running turn that logged nothing yet is the session's latest
	// turn, and is found by its id, live, with no events.
	other := newTurnID(t)
	noErr(t, "AcquireLease(other)", s.AcquireLease(ctx, k, other, time.Minute))
	wantTurn(t, "while another turn holds the lease", readTurn(t, s, k, turn, 0), turn, 1, events(1, 2), false, false)
	wantTurn(t, "latest, the running turn without a log", readTurn(t, s, k, "", 0), other, 1, nil, false, true)
	wantTurn(t, "the running turn without a log, by id", readTurn(t, s, k, other, 3), other, 4, nil, false, true)
	noErr(t, "ReleaseLease(other)", s.ReleaseLease(ctx, k, other))
	wantTurn(t, "latest, once it ended without a log", readTurn(t, s, k, "", 0), turn, 1, events(1, 2), false, false)
	wantTurn(t, "by id, once it ended without a log", readTurn(t, s, k, other, 0), "", 0, nil, false, false)

	noErr(t, "AcquireLease(turn) again", s.AcquireLease(ctx, k, turn, time.Minute))
	wantTurn(t, "holding the lease again", readTurn(t, s, k, turn, 0), turn, 1, events(1, 2), false, true)
	clock.Advance(2 * time.Minute)
	wantTurn(t, "after the lease expired", readTurn(t, s, k, turn, 0), turn, 1, events(1, 2), false, false)
}

// testTurnLogOwnership: another user's session, or one that does not
// exist, is ErrNotFound; an append to a missing session writes nothing.
func testTurnLogOwnership(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	turn := newTurnID(t)
	appendTurn(t, s, k, turn, 1, events(1, 2), true)
	bob := store.Key{ProjectID: k.ProjectID, UserID: "bob", ThreadID: k.ThreadID}
	for _, tc := range []struct {
		name string
		turn string
	}{{"latest", ""}, {"by id", turn}} {
		_, err := s.ReadTurnEvents(ctx, bob, tc.turn, 0)
		wantErr(t, "ReadTurnEvents of another user's session, "+tc.name, err, store.ErrNotFound)
	}

	missing := newKey(k.ProjectID, "alice")
	_, err := s.ReadTurnEvents(ctx, missing, "", 0)
	wantErr(t, "ReadTurnEvents of a missing session", err, store.ErrNotFound)
	lost := newTurnID(t)
	err = s.AppendTurnEvents(ctx, missing, store.TurnEvents{Turn: lost, First: 1, Events: events(1, 1)}, store.TurnLogKeep)
	wantErr(t, "AppendTurnEvents to a missing session", err, store.ErrNotFound)
	create(t, s, missing, nil)
	wantTurn(t, "the session created after the refused append", readTurn(t, s, missing, "", 0), "", 0, nil, false, false)
	wantTurn(t, "the refused turn", readTurn(t, s, missing, lost, 0), "", 0, nil, false, false)
}

// testTurnLogDelete: deleting the session or its project deletes its
// logs; a session created again with the same ids has none.
func testTurnLogDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, tc := range []struct {
		name     string
		messages bool
		del      func(k store.Key) error
	}{
		{"DeleteSession", false, func(k store.Key) error { return s.DeleteSession(ctx, k) }},
		{"DeleteSession with messages", true, func(k store.Key) error { return s.DeleteSession(ctx, k) }},
		{"DeleteProject", true, func(k store.Key) error { return s.DeleteProject(ctx, k.ProjectID) }},
	} {
		k := newKey(newProject(), "alice")
		create(t, s, k, nil)
		if tc.messages {
			appendMsgs(t, s, k, textMsg(store.RoleUser, "hi"))
		}
		turn := newTurnID(t)
		appendTurn(t, s, k, turn, 1, nil, false)
		appendTurn(t, s, k, turn, 1, events(1, 3), true)
		noErr(t, tc.name, tc.del(k))
		_, err := s.ReadTurnEvents(ctx, k, "", 0)
		wantErr(t, tc.name+": ReadTurnEvents of the deleted session", err, store.ErrNotFound)
		create(t, s, k, nil)
		wantTurn(t, tc.name+": latest turn of the session created again", readTurn(t, s, k, "", 0), "", 0, nil, false, false)
		wantTurn(t, tc.name+": the old turn in the session created again", readTurn(t, s, k, turn, 0), "", 0, nil, false, false)
		next := newTurnID(t)
		appendTurn(t, s, k, next, 1, events(1, 1), true)
		wantTurn(t, tc.name+": a new turn in the session created again", readTurn(t, s, k, "", 0), next, 1, events(1, 1), true, false)
	}
}

// testTurnLogExpiry: a batch is kept keep after its write, then ignored.
func testTurnLogExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	turn := newTurnID(t)
	keep := time.Hour
	noErr(t, "append 1", s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: turn, First: 1, Events: events(1, 1)}, keep))
	clock.Advance(40 * time.Minute)
	noErr(t, "append 2", s.AppendTurnEvents(ctx, k, store.TurnEvents{Turn: turn, First: 2, Events: events(2, 2), Final: true}, keep))
	wantTurn(t, "before any expiry", readTurn(t, s, k, "", 0), turn, 1, events(1, 2), true, false)
	clock.Advance(40 * time.Minute) // batch 1 is past keep, batch 2 is not
	wantTurn(t, "after event 1, which expired", readTurn(t, s, k, turn, 1), turn, 2, events(2, 2), true, false)
	if got := readTurn(t, s, k, turn, 0); len(got.Events) != 0 {
		t.Fatalf("from the start with event 1 expired: events %d.. (%d), want none (event 1 is gone)", got.First, len(got.Events))
	}
	clock.Advance(40 * time.Minute)
	wantTurn(t, "latest, all expired", readTurn(t, s, k, "", 0), "", 0, nil, false, false)
	wantTurn(t, "by id, all expired", readTurn(t, s, k, turn, 0), "", 0, nil, false, false)
}
