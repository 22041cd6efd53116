package storetest

import (
	"strings"
	"testing"
	"time"

	"agentchat/internal/store"
)

// rollbackTests are the tests of store.TurnRollbacks, run by Run. A turn
// tags every message it stores with its id (store.MetadataTurnID); the
// rollback strategy removes the trailing run of an interrupted turn's
// messages once the next turn holds the session's lease.
var rollbackTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"RollBackTurn", testRollBackTurn},
	{"RollBackTurnNotLast", testRollBackTurnNotLast},
	{"RollBackTurnNothing", testRollBackTurnNothing},
	{"RollBackTurnNotFound", testRollBackTurnNotFound},
	{"RollBackTurnMixedMetadata", testRollBackTurnMixedMetadata},
	{"RollBackTurnUncounted", testRollBackTurnUncounted},
	{"RollBackTurnLarge", testRollBackTurnLarge},
}

// ofTurn returns m tagged as stored by turn.
func ofTurn(turn string, m store.Message) store.Message {
	md := map[string]any{store.MetadataTurnID: turn}
	for k, v := range m.Metadata {
		md[k] = v
	}
	m.Metadata = md
	return m
}

// turnB is the run of an interrupted turn: user, assistant with a tool
// call, tool result, assistant.
func turnB() []store.Message {
	return []store.Message{
		ofTurn("B", textMsg(store.RoleUser, "ping R1")),
		ofTurn("B", store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{
			ID: "call_b", Type: "function", Function: store.FunctionCall{Name: "ping", Arguments: `{"host":"R1"}`},
		}}}),
		ofTurn("B", store.Message{Role: store.RoleTool, Name: "ping", ToolCallID: "call_b", Content: "5 packets received"}),
		ofTurn("B", textMsg(store.RoleAssistant, "R1 answers")),
	}
}

// rollBack runs RollBackTurn and fails unless it removed want messages.
func rollBack(t *testing.T, s store.Store, k store.Key, turn string, want int) {
	t.Helper()
	n, err := s.RollBackTurn(t.Context(), k, turn)
	if err != nil {
		t.Fatalf("RollBackTurn(%s): %v", turn, err)
	}
	if n != want {
		t.Errorf("RollBackTurn(%s) removed %d messages, want %d", turn, n, want)
	}
}

// wantMessages fails unless the session's messages are want (as stored:
// ids, contents, metadata), in order and with increasing seqs, through
// ListMessages with and without a limit and through ListHistory.
func wantMessages(t *testing.T, s store.Store, k store.Key, what string, want []store.Message) {
	t.Helper()
	check := func(how string, got, want []store.Message) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %s: %d messages %s, want %d %s", what, how, len(got), shortContents(got), len(want), shortContents(want))
			return
		}
		for i := range want {
			if d := diffMessage(want[i], got[i]); d != "" {
				t.Errorf("%s: %s: message %d: %s", what, how, i, d)
			}
			if i > 0 && got[i].Seq <= got[i-1].Seq {
				t.Errorf("%s: %s: seq %d follows seq %d", what, how, got[i].Seq, got[i-1].Seq)
			}
		}
	}
	check("ListMessages(0)", listMsgs(t, s, k, 0), want)
	if len(want) > 1 {
		check("ListMessages(2)", listMsgs(t, s, k, 2), want[len(want)-2:])
	}
	page, _, err := historyPager(t, s).ListHistory(t.Context(), k, store.HistoryPage{Limit: 100})
	noErr(t, what+": ListHistory", err)
	check("ListHistory", page, want)
}

// wantCount fails unless the session's MessageCount is want.
func wantCount(t *testing.T, s store.Store, k store.Key, what string, want int64) {
	t.Helper()
	if got := get(t, s, k).MessageCount; got != want {
		t.Errorf("%s: MessageCount %d, want %d", what, got, want)
	}
}

func testRollBackTurn(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	a := appendMsgs(t, s, k, ofTurn("A", textMsg(store.RoleUser, "hi")), ofTurn("A", textMsg(store.RoleAssistant, "hello")))
	noErr(t, "AddTurnStats(A)", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 2, Turns: 1}))

	// B runs and is interrupted: it ends (counting its messages), and the
	// new turn C takes the lease and removes B's messages.
	noErr(t, "AcquireLease(B)", s.AcquireLease(ctx, k, "B", time.Hour))
	b := turnB()
	appendMsgs(t, s, k, b[0])
	appendMsgs(t, s, k, b[1:3]...)
	appendMsgs(t, s, k, b[3])
	noErr(t, "AddTurnStats(B)", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 4, Turns: 1}))
	noErr(t, "ReleaseLease(B)", s.ReleaseLease(ctx, k, "B"))
	noErr(t, "AcquireLease(C)", s.AcquireLease(ctx, k, "C", time.Hour))
	wantCount(t, s, k, "before the rollback", 6)

	rollBack(t, s, k, "B", 4)
	wantMessages(t, s, k, "after the rollback", a)
	wantCount(t, s, k, "after the rollback", 2)
	rollBack(t, s, k, "B", 0)

	// C goes on: its messages follow A's, and are counted as usual.
	c := appendMsgs(t, s, k, ofTurn("C", textMsg(store.RoleUser, "ping R2 instead")), ofTurn("C", textMsg(store.RoleAssistant, "R2 answers")))
	noErr(t, "AddTurnStats(C)", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 2, Turns: 1}))
	noErr(t, "ReleaseLease(C)", s.ReleaseLease(ctx, k, "C"))
	wantMessages(t, s, k, "after the next turn", append(a, c...))
	wantCount(t, s, k, "after the next turn", 4)
	noErr(t, "AcquireLease(D)", s.AcquireLease(ctx, k, "D", time.Hour))
	wantCount(t, s, k, "after the next lease", 4)

	// C's messages can be rolled back in turn, A's then.
	rollBack(t, s, k, "C", 2)
	wantMessages(t, s, k, "after C's rollback", a)
	rollBack(t, s, k, "A", 2)
	wantMessages(t, s, k, "after A's rollback", nil)
	wantCount(t, s, k, "after A's rollback", 0)
	d := appendMsgs(t, s, k, ofTurn("D", textMsg(store.RoleUser, "start over")))
	wantMessages(t, s, k, "after an append to the emptied session", d)
}

// Only the trailing run is removed: a turn whose messages are followed by
// another's keeps them.
func testRollBackTurnNotLast(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	all := appendMsgs(t, s, k, turnB()...)
	all = append(all, appendMsgs(t, s, k, ofTurn("C", textMsg(store.RoleUser, "and R2?")))...)
	all = append(all, appendMsgs(t, s, k, ofTurn("B", textMsg(store.RoleAssistant, "late B")))...)
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 6}))

	// The last message is B's again: only it is B's trailing run.
	rollBack(t, s, k, "B", 1)
	all = all[:5]
	wantMessages(t, s, k, "after B's trailing message", all)
	rollBack(t, s, k, "B", 0)
	wantMessages(t, s, k, "after B's messages followed by C's", all)
	wantCount(t, s, k, "after B's messages followed by C's", 5)
}

// A turn with no message at the end, or a session without messages:
// nothing is removed and nothing changes.
func testRollBackTurnNothing(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	rollBack(t, s, k, "B", 0)
	wantMessages(t, s, k, "empty session", nil)
	wantCount(t, s, k, "empty session", 0)

	all := appendMsgs(t, s, k, turnB()...)
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 4}))
	for _, turn := range []string{"unknown", "", "b", "B "} {
		rollBack(t, s, k, turn, 0)
	}
	wantMessages(t, s, k, "after rollbacks of other turns", all)
	wantCount(t, s, k, "after rollbacks of other turns", 4)
	next := appendMsgs(t, s, k, ofTurn("C", textMsg(store.RoleUser, "next")))
	wantMessages(t, s, k, "after an append", append(all, next...))
}

func testRollBackTurnNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	_, err := s.RollBackTurn(ctx, k, "B")
	wantErr(t, "RollBackTurn on a missing session", err, store.ErrNotFound)

	create(t, s, k, nil)
	all := appendMsgs(t, s, k, turnB()...)
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 4}))
	other := k
	other.UserID = "mallory"
	n, err := s.RollBackTurn(ctx, other, "B")
	wantErr(t, "RollBackTurn on another user's session", err, store.ErrNotFound)
	if n != 0 {
		t.Errorf("RollBackTurn on another user's session removed %d messages", n)
	}
	wantMessages(t, s, k, "after another user's rollback", all)
	wantCount(t, s, k, "after another user's rollback", 4)
}

// Messages without metadata, with other keys, or with a turn id that is
// not a string, are no turn's; other keys beside the tag do not matter.
func testRollBackTurnMixedMetadata(t *testing.T, s store.Store) {
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	extra := func(m store.Message, md map[string]any) store.Message { m.Metadata = md; return m }
	kept := appendMsgs(t, s, k,
		ofTurn("B", textMsg(store.RoleUser, "tagged")),
		textMsg(store.RoleAssistant, "no metadata"),
		extra(textMsg(store.RoleUser, "other keys"), map[string]any{"source": "console", "lang": "fr"}),
		extra(textMsg(store.RoleUser, "number tag"), map[string]any{store.MetadataTurnID: 7.0}),
		ofTurn("B", extra(textMsg(store.RoleUser, "tagged, other keys"), map[string]any{"source": "ui"})),
	)
	run := appendMsgs(t, s, k,
		ofTurn("B", extra(textMsg(store.RoleAssistant, "tagged, nested"), map[string]any{"usage": map[string]any{"in": 3.0}})),
		ofTurn("B", textMsg(store.RoleAssistant, "tagged")),
	)
	rollBack(t, s, k, "B", 3)
	wantMessages(t, s, k, "after the rollback", kept[:4])

	// The last message has a turn id that is not a string.
	rollBack(t, s, k, "7", 0)
	wantMessages(t, s, k, "after a rollback of no message", kept[:4])
	for i := range run {
		run[i].ID, run[i].Seq = "", 0 // stored anew
	}
	appendMsgs(t, s, k, run...)
	wantMessages(t, s, k, "after the run was stored again", append(kept[:4:4], run...))
	rollBack(t, s, k, "B", 2)
	wantMessages(t, s, k, "after its second rollback", kept[:4])
}

// The messages of a turn cut before its AddTurnStats are not counted: a
// rollback keeps MessageCount from going negative, and the next lease
// counts the messages left.
func testRollBackTurnUncounted(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	a := appendMsgs(t, s, k, ofTurn("A", textMsg(store.RoleUser, "hi")), ofTurn("A", textMsg(store.RoleAssistant, "hello")))
	appendMsgs(t, s, k, turnB()...)
	rollBack(t, s, k, "B", 4)
	if got := get(t, s, k).MessageCount; got < 0 {
		t.Errorf("MessageCount %d after rolling back uncounted messages", got)
	}
	noErr(t, "AcquireLease(C)", s.AcquireLease(ctx, k, "C", time.Hour))
	wantCount(t, s, k, "after the next lease", 2)
	wantMessages(t, s, k, "after the next lease", a)
}

// A message too large for one item (DynamoDB stores it in parts) is
// removed with its run, and the history reads well after.
func testRollBackTurnLarge(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	a := appendMsgs(t, s, k, ofTurn("A", textMsg(store.RoleUser, "show run")))
	big := strings.Repeat("interface GigabitEthernet0/1\n no shutdown\n", 16<<10) // ~650 KB
	b := turnB()
	b[2].Content = big
	appendMsgs(t, s, k, b...)
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 5}))
	rollBack(t, s, k, "B", 4)
	wantMessages(t, s, k, "after the rollback", a)
	wantCount(t, s, k, "after the rollback", 1)

	c := appendMsgs(t, s, k, ofTurn("C", store.Message{Role: store.RoleTool, Name: "console", ToolCallID: "call_c", Content: big[:450<<10]}),
		ofTurn("C", textMsg(store.RoleAssistant, "done")))
	wantMessages(t, s, k, "after a large append", append(a, c...))
	rollBack(t, s, k, "C", 2)
	wantMessages(t, s, k, "after the large append's rollback", a)
}
