package storetest

import (
	"testing"
	"time"

	"agentchat/internal/store"
)

// cutTurnTests are the tests of turns cut short, run by Run. A turn appends
// its messages step by step and counts them once, at its end, with
// AddTurnStats; a turn cut between the two (its process killed) leaves
// messages committed but uncounted, and its lease held. The next lease
// holder (after the lease expired, or AbortGrace after an abort) counts
// them: message_count is then the number of committed messages. The cut
// turn's other statistics are never written, so it is counted at most
// once, and counts that agree with the messages are left alone.
var cutTurnTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"CutTurnCountedByNextLease", testCutTurnCountedByNextLease},
	{"CutTurnOnNewSession", testCutTurnOnNewSession},
}

// wantCounts fails unless the session counts as many messages as it holds,
// and has the given turn and LLM call counters.
func wantCounts(t *testing.T, s store.Store, k store.Key, what string, messages, turns, llmCalls int64) {
	t.Helper()
	got := get(t, s, k)
	stored := int64(len(listMsgs(t, s, k, 0)))
	if got.MessageCount != messages || stored != messages || got.Stats.Turns != turns || got.LLMCallsCount != llmCalls {
		t.Errorf("%s: message_count %d, %d stored messages, %d turns, %d LLM calls; want %d, %d, %d, %d",
			what, got.MessageCount, stored, got.Stats.Turns, got.LLMCallsCount, messages, messages, turns, llmCalls)
	}
}

func testCutTurnCountedByNextLease(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)

	// A whole turn.
	noErr(t, "AcquireLease(A)", s.AcquireLease(ctx, k, "A", time.Hour))
	appendMsgs(t, s, k, textMsg(store.RoleUser, "hi"), textMsg(store.RoleAssistant, "hello"))
	noErr(t, "AddTurnStats(A)", s.AddTurnStats(ctx, k, store.TurnStats{
		Messages: 2, LLMCalls: 1, InputTokens: 10, OutputTokens: 5, ToolCalls: map[string]int64{"ping": 1}, Turns: 1,
	}))
	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))

	// B is cut after two completed steps: no statistics, no release.
	noErr(t, "AcquireLease(B)", s.AcquireLease(ctx, k, "B", time.Hour))
	appendMsgs(t, s, k, textMsg(store.RoleUser, "start R1"))
	appendMsgs(t, s, k, store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{
		ID: "call_1", Type: "function", Function: store.FunctionCall{Name: "start", Arguments: `{}`},
	}}})

	// Its lease keeps the session until an abort frees it; the next
	// holder counts B's messages, and nothing else of B.
	wantErr(t, "AcquireLease(C) while the dead B holds", s.AcquireLease(ctx, k, "C", time.Hour), store.ErrLeaseHeld)
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	clock.Advance(store.AbortGrace + time.Second)
	noErr(t, "AcquireLease(C) after the grace", s.AcquireLease(ctx, k, "C", time.Hour))
	wantCounts(t, s, k, "after the lease of the cut turn was taken", 4, 1, 1)
	if got := get(t, s, k); got.InputTokens != 10 || got.OutputTokens != 5 || got.Stats.ToolCalls["ping"] != 1 || got.Stats.AbortedTurns != 0 {
		t.Errorf("the cut turn changed other counters: %+v", got)
	}

	// C runs to its end, counting its own messages: nothing is counted twice.
	appendMsgs(t, s, k, textMsg(store.RoleTool, "interrupted"), textMsg(store.RoleUser, "again"), textMsg(store.RoleAssistant, "done"))
	noErr(t, "AddTurnStats(C)", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 3, LLMCalls: 1, Turns: 1}))
	noErr(t, "ReleaseLease(C)", s.ReleaseLease(ctx, k, "C"))
	wantCounts(t, s, k, "after the next turn", 7, 2, 2)

	// D is cut too, its lease left to expire; the user message it stored
	// is counted by the next holder.
	noErr(t, "AcquireLease(D, 50ms)", s.AcquireLease(ctx, k, "D", 50*time.Millisecond))
	appendMsgs(t, s, k, textMsg(store.RoleUser, "are you there?"))
	acquireEventually(t, s, k, "E")
	wantCounts(t, s, k, "after the expired lease was taken", 8, 2, 2)
	noErr(t, "ReleaseLease(E)", s.ReleaseLease(ctx, k, "E"))

	// Counts that agree with the messages are left as they are.
	noErr(t, "AcquireLease(F)", s.AcquireLease(ctx, k, "F", time.Hour))
	noErr(t, "AcquireLease(F) again", s.AcquireLease(ctx, k, "F", time.Hour))
	wantCounts(t, s, k, "after more leases", 8, 2, 2)
}

// testCutTurnOnNewSession: a turn that created its session with the lease
// held and was cut after storing the user message.
func testCutTurnOnNewSession(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	k := newKey(newProject(), "alice")
	sess := &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}
	noErr(t, "CreateLeasedSession(A)", s.CreateLeasedSession(ctx, sess, "A", time.Hour))
	appendMsgs(t, s, k, textMsg(store.RoleUser, "first words"))
	if got := get(t, s, k); got.MessageCount > 1 {
		t.Errorf("message_count %d with 1 stored message", got.MessageCount)
	}

	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	clock.Advance(store.AbortGrace + time.Second)
	noErr(t, "AcquireLease(B)", s.AcquireLease(ctx, k, "B", time.Hour))
	wantCounts(t, s, k, "after the lease of the cut first turn was taken", 1, 0, 0)
	appendMsgs(t, s, k, textMsg(store.RoleUser, "hello?"), textMsg(store.RoleAssistant, "hi"))
	noErr(t, "AddTurnStats(B)", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 2, LLMCalls: 1, Turns: 1}))
	noErr(t, "ReleaseLease(B)", s.ReleaseLease(ctx, k, "B"))
	wantCounts(t, s, k, "after the next turn", 3, 1, 1)
}
