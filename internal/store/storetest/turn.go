package storetest

import (
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

// ---- store.OpenTurn and store.FinishTurn, on every path ----

// The tests of store.OpenTurn and store.FinishTurn (in oneStepTests) run
// on every path the store offers (turnPaths): the store as it is (its
// one-write calls, if any) and the basic calls only.

// basicStore hides the optional interfaces of the store it holds (it has
// no Unwrap): store.OpenTurn and store.FinishTurn compose the basic calls.
type basicStore struct{ store.Store }

// openerOnly has the store's TurnOpener, not its TurnOpenCreator nor its
// TurnFinisher.
type openerOnly struct {
	store.Store
	store.TurnOpener
}

// turnPaths are the ways store.OpenTurn and store.FinishTurn may use s.
func turnPaths(s store.Store) map[string]store.Store {
	paths := map[string]store.Store{"as is": s, "basic calls": basicStore{s}}
	if op, ok := store.Capability[store.TurnOpener](s); ok {
		paths["TurnOpener only"] = openerOnly{Store: s, TurnOpener: op}
	}
	return paths
}

// onTurnPaths runs fn on every path of the store.
func onTurnPaths(fn func(t *testing.T, s store.Store)) func(t *testing.T, s store.Store) {
	return func(t *testing.T, s store.Store) {
		for name, p := range turnPaths(s) {
			t.Run(name, func(t *testing.T) { fn(t, p) })
		}
	}
}

// opening is a TurnOpening of k by owner for an hour; newSession (when
// not nil) counts its calls in calls and refuses with refuse when set.
func opening(k store.Key, owner string, limit int, calls *int, refuse error) store.TurnOpening {
	op := store.TurnOpening{Key: k, Owner: owner, TTL: time.Hour, HistoryLimit: limit}
	if calls != nil {
		op.NewSession = func() (*store.Session, error) {
			*calls++
			if refuse != nil {
				return nil, refuse
			}
			return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "new"}, nil
		}
	}
	return op
}

// history reads the opened turn's history.
func history(t *testing.T, o *store.OpenedTurn) []string {
	t.Helper()
	hist, err := o.History(t.Context())
	noErr(t, "History", err)
	out := make([]string, len(hist))
	for i, m := range hist {
		out[i] = m.Content
	}
	return out
}

// testStoreOpenTurn: store.OpenTurn opens an existing session with its
// history, creates a missing one only when asked and allowed, and refuses
// a held session and another user's thread id.
func testStoreOpenTurn(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "kept" })
	appendMsgs(t, s, k, textMsg(store.RoleUser, "1"), textMsg(store.RoleAssistant, "2"), textMsg(store.RoleUser, "3"))
	refused := errors.New("refused")

	calls := 0
	o, err := store.OpenTurn(ctx, s, opening(k, "A", 2, &calls, nil))
	noErr(t, "existing session", err)
	if o.Created || calls != 0 || o.Session.Title != "kept" {
		t.Errorf("existing session: created=%v, newSession called %d times, session %+v", o.Created, calls, o.Session)
	}
	if got := history(t, o); len(got) != 2 || got[0] != "2" || got[1] != "3" {
		t.Errorf("history %v, want [2 3]", got)
	}
	wantErr(t, "AcquireLease(B) after OpenTurn(A)", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)
	o, err = store.OpenTurn(ctx, s, opening(k, "A", 0, nil, nil))
	noErr(t, "same owner again", err)
	if got := history(t, o); len(got) != 3 {
		t.Errorf("history %v, want 3 messages", got)
	}

	_, err = store.OpenTurn(ctx, s, opening(k, "B", 0, &calls, nil))
	wantErr(t, "held by another owner", err, store.ErrLeaseHeld)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Errorf("held by another owner: %v (%T) is not a *store.LeaseHeldError", err, err)
	}
	if calls != 0 {
		t.Errorf("newSession called %d times for a held session", calls)
	}

	missing := newKey(p, "alice")
	_, err = store.OpenTurn(ctx, s, opening(missing, "A", 0, nil, nil))
	wantErr(t, "missing session without NewSession", err, store.ErrNotFound)
	_, err = store.OpenTurn(ctx, s, opening(missing, "A", 0, &calls, refused))
	wantErr(t, "refused creation", err, refused)
	_, err = s.GetSession(ctx, missing)
	wantErr(t, "GetSession after a refused creation", err, store.ErrNotFound)

	calls = 0
	o, err = store.OpenTurn(ctx, s, opening(missing, "A", 0, &calls, nil))
	noErr(t, "missing session", err)
	if !o.Created || calls != 1 || o.Session.Title != "new" || !o.HistoryLoaded() || len(history(t, o)) != 0 {
		t.Errorf("missing session: created=%v, newSession called %d times, session %+v", o.Created, calls, o.Session)
	}
	if got := get(t, s, missing); got.Title != "new" {
		t.Errorf("created session %+v", got)
	}
	wantErr(t, "created session held by A", s.AcquireLease(ctx, missing, "B", time.Hour), store.ErrLeaseHeld)

	// Another user's thread id: not found, nothing created, the owner's
	// lease (A's) left alone.
	bobs := store.Key{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID}
	calls = 0
	_, err = store.OpenTurn(ctx, s, opening(bobs, "C", 0, &calls, nil))
	wantErr(t, "another user's thread id", err, store.ErrNotFound)
	wantErr(t, "AcquireLease(B) after bob's attempt", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)
	if got := get(t, s, k); got.UserID != "alice" || got.Title != "kept" {
		t.Errorf("owner's session changed: %+v", got)
	}
	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))
	if _, err := store.OpenTurn(ctx, s, opening(k, "B", 0, nil, nil)); err != nil {
		t.Errorf("OpenTurn(B) after the release: %v", err)
	}
}

// testStoreOpenTurnFresh: a fresh thread id is created with its lease; a
// taken one is ErrExists, the session and its lease untouched.
func testStoreOpenTurnFresh(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	calls := 0
	op := opening(k, "A", 0, &calls, nil)
	op.Fresh = true
	o, err := store.OpenTurn(ctx, s, op)
	noErr(t, "fresh thread id", err)
	if !o.Created || calls != 1 || len(history(t, o)) != 0 {
		t.Errorf("fresh thread id: created=%v, newSession called %d times", o.Created, calls)
	}
	wantErr(t, "AcquireLease(B) after the creation", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)

	op.Owner = "B"
	_, err = store.OpenTurn(ctx, s, op)
	wantErr(t, "fresh thread id taken", err, store.ErrExists)
	wantErr(t, "AcquireLease(B) after the refused creation", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)
	if got := get(t, s, k); got.Title != "new" {
		t.Errorf("session after the refused creation: %+v", got)
	}
}

// testStoreFinishTurn: store.FinishTurn appends, counts and releases; a
// refused append still counts the turn and frees the session; a deleted
// session is ErrNotFound.
func testStoreFinishTurn(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k, base := leasedWithQuestion(t, s, p, "A")

	// The answer is counted by FinishTurn, not by the caller's delta.
	answer := store.Message{Role: store.RoleAssistant, Content: "answer", CreatedAt: time.Now().UTC()}
	out, err := store.FinishTurn(ctx, s, k, "A", []store.Message{answer},
		store.TurnStats{Turns: 1, LLMCalls: 1, InputTokens: 10, OutputTokens: 4})
	checkAnswerFinished(t, s, k, base, answer, out, err)

	// No messages: statistics and release only.
	_, err = store.FinishTurn(ctx, s, k, "B", nil, store.TurnStats{Turns: 1, Errors: 1})
	noErr(t, "FinishTurn(B) without messages", err)
	if got := get(t, s, k); got.Stats.Turns != 2 || got.Stats.Errors != 1 || len(listMsgs(t, s, k, 0)) != 2 {
		t.Errorf("after FinishTurn without messages: turns %d errors %d", got.Stats.Turns, got.Stats.Errors)
	}

	// A message the store refuses: not stored, but the turn is counted and
	// the session freed.
	noErr(t, "AcquireLease(C)", s.AcquireLease(ctx, k, "C", time.Hour))
	out, err = store.FinishTurn(ctx, s, k, "C", []store.Message{textMsg("narrator", "x")}, store.TurnStats{Turns: 1, Errors: 1})
	if err == nil || out != nil {
		t.Fatalf("FinishTurn with an unknown role: %+v, %v; want an error and nothing stored", out, err)
	}
	if errors.Is(err, store.ErrNotFound) {
		t.Errorf("FinishTurn with an unknown role: %v, not a deleted session", err)
	}
	if got := get(t, s, k); got.Stats.Turns != 3 || got.MessageCount != base+1 || len(listMsgs(t, s, k, 0)) != 2 {
		t.Errorf("after a refused message: turns %d, messages %d", got.Stats.Turns, got.MessageCount)
	}
	noErr(t, "AcquireLease(D) after a refused message", s.AcquireLease(ctx, k, "D", time.Hour))

	_, err = store.FinishTurn(ctx, s, newKey(p, "alice"), "A", []store.Message{textMsg(store.RoleAssistant, "x")}, store.TurnStats{Turns: 1})
	wantErr(t, "FinishTurn(missing session)", err, store.ErrNotFound)
	_, err = store.FinishTurn(ctx, s, newKey(p, "alice"), "A", nil, store.TurnStats{Turns: 1})
	wantErr(t, "FinishTurn(missing session) without messages", err, store.ErrNotFound)
}

// leasedWithQuestion creates a session of alice in project p with one
// user message, its lease held by owner, and returns it with its message
// count (which the lease take may reconcile with the stored messages).
func leasedWithQuestion(t *testing.T, s store.Store, p, owner string) (store.Key, int64) {
	t.Helper()
	k := newKey(p, "alice")
	create(t, s, k, nil)
	appendMsgs(t, s, k, textMsg(store.RoleUser, "question"))
	noErr(t, "AcquireLease("+owner+")", s.AcquireLease(t.Context(), k, owner, time.Hour))
	return k, get(t, s, k).MessageCount
}

// checkAnswerFinished checks the end of a turn on k (by leasedWithQuestion)
// with answer, one LLM call of 10+4 tokens: the answer stored after the
// question and returned (out) with its id and seq, the counters added,
// the lease free.
func checkAnswerFinished(t *testing.T, s store.Store, k store.Key, base int64, answer store.Message, out []store.Message, err error) {
	t.Helper()
	noErr(t, "FinishTurn", err)
	if len(out) != 1 || out[0].ID == "" || out[0].Seq == 0 {
		t.Fatalf("FinishTurn returned %+v, want one message with its id and seq", out)
	}
	hist := listMsgs(t, s, k, 0)
	if len(hist) != 2 || hist[1].Content != answer.Content || hist[1].Seq != out[0].Seq {
		t.Fatalf("history after FinishTurn: %+v", hist)
	}
	got := get(t, s, k)
	if got.Stats.Turns != 1 || got.MessageCount != base+1 || got.LLMCallsCount != 1 || got.TotalTokens != 14 || !timeEq(got.LastMessageAt, answer.CreatedAt) {
		t.Errorf("counters after FinishTurn: %+v", got)
	}
	noErr(t, "AcquireLease(B) after FinishTurn", s.AcquireLease(t.Context(), k, "B", time.Hour))
}
