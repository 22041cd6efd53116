package storetest

import (
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

// ---- the optional one-step turn calls (store.TurnOpener, store.TurnOpenCreator, store.TurnFinisher) ----

// oneStepTests are the tests of the optional interfaces, run by Run (a
// store without one skips its test), and of store.OpenTurn and
// store.FinishTurn, which use them (turn.go).
var oneStepTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"OpenTurn", testOpenTurn},
	{"OpenOrCreateTurn", testOpenOrCreateTurn},
	{"FinishTurn", testFinishTurn},
	{"FinishTitledTurn", testFinishTitledTurn},
	{"StoreOpenTurn", onTurnPaths(testStoreOpenTurn)},
	{"StoreOpenTurnFresh", onTurnPaths(testStoreOpenTurnFresh)},
	{"StoreFinishTurn", onTurnPaths(testStoreFinishTurn)},
}

// testOpenTurn: OpenTurn takes the lease as AcquireLease does and returns
// the session and the history ListMessages returns.
func testOpenTurn(t *testing.T, s store.Store) {
	op, ok := store.Capability[store.TurnOpener](s)
	if !ok {
		t.Skip("the store has no OpenTurn")
	}
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "kept" })
	appendMsgs(t, s, k, textMsg(store.RoleUser, "1"), textMsg(store.RoleAssistant, "2"), textMsg(store.RoleUser, "3"))

	cases := []struct {
		name    string
		limit   int
		want    []string
		wantErr error
		key     store.Key
		owner   string
	}{
		{name: "all messages", limit: 0, want: []string{"1", "2", "3"}, key: k, owner: "A"},
		{name: "same owner again, last two", limit: 2, want: []string{"2", "3"}, key: k, owner: "A"},
		{name: "held by another owner", key: k, owner: "B", wantErr: store.ErrLeaseHeld},
		{name: "no such session", key: newKey(p, "alice"), owner: "A", wantErr: store.ErrNotFound},
		{name: "another user's session", key: store.Key{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID}, owner: "C", wantErr: store.ErrNotFound},
	}
	for _, tc := range cases {
		sess, hist, err := op.OpenTurn(ctx, tc.key, tc.owner, time.Hour, tc.limit)
		if tc.wantErr != nil {
			wantErr(t, tc.name, err, tc.wantErr)
			var held *store.LeaseHeldError
			if errors.Is(tc.wantErr, store.ErrLeaseHeld) && !errors.As(err, &held) {
				t.Errorf("%s: %v (%T) is not a *store.LeaseHeldError", tc.name, err, err)
			}
			continue
		}
		noErr(t, tc.name, err)
		if sess.ThreadID != k.ThreadID || sess.Title != "kept" {
			t.Errorf("%s: session %+v, want thread %s titled kept", tc.name, sess, k.ThreadID)
		}
		want := listMsgs(t, s, k, tc.limit)
		if len(hist) != len(tc.want) || len(want) != len(tc.want) {
			t.Fatalf("%s: %d messages (ListMessages %d), want %d", tc.name, len(hist), len(want), len(tc.want))
		}
		for i := range hist {
			if hist[i].Content != tc.want[i] {
				t.Errorf("%s: message %d = %q, want %q", tc.name, i, hist[i].Content, tc.want[i])
			}
			if d := diffMessage(want[i], hist[i]); d != "" {
				t.Errorf("%s: message %d differs from ListMessages: %s", tc.name, i, d)
			}
		}
	}
	// The lease is held: AcquireLease by another owner is refused.
	wantErr(t, "AcquireLease(B) after OpenTurn(A)", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)
	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))
	if _, _, err := op.OpenTurn(ctx, k, "B", time.Hour, 0); err != nil {
		t.Errorf("OpenTurn(B) after the release: %v", err)
	}
}

// testOpenOrCreateTurn: OpenOrCreateTurn opens an existing session as
// OpenTurn does, creates a missing one with the lease in the same write,
// writes nothing when newSession refuses, and reports a thread id taken by
// another user as ErrExists.
func testOpenOrCreateTurn(t *testing.T, s store.Store) {
	oc, ok := store.Capability[store.TurnOpenCreator](s)
	if !ok {
		t.Skip("the store has no OpenOrCreateTurn")
	}
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "kept" })
	appendMsgs(t, s, k, textMsg(store.RoleUser, "1"), textMsg(store.RoleAssistant, "2"))
	refused := errors.New("refused")
	calls := 0
	newSession := func(k store.Key, err error) func() (*store.Session, error) {
		return func() (*store.Session, error) {
			calls++
			if err != nil {
				return nil, err
			}
			return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "new"}, nil
		}
	}

	sess, hist, created, err := oc.OpenOrCreateTurn(ctx, k, "A", time.Hour, 0, newSession(k, nil))
	noErr(t, "existing session", err)
	if created || calls != 0 || sess.Title != "kept" || len(hist) != 2 {
		t.Errorf("existing session: created=%v, newSession called %d times, session %+v, %d messages", created, calls, sess, len(hist))
	}
	wantErr(t, "existing session held by A", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)

	missing := newKey(p, "alice")
	_, _, _, err = oc.OpenOrCreateTurn(ctx, missing, "A", time.Hour, 0, newSession(missing, refused))
	wantErr(t, "refused creation", err, refused)
	_, err = s.GetSession(ctx, missing)
	wantErr(t, "GetSession after a refused creation", err, store.ErrNotFound)

	calls = 0
	sess, hist, created, err = oc.OpenOrCreateTurn(ctx, missing, "A", time.Hour, 0, newSession(missing, nil))
	noErr(t, "missing session", err)
	if !created || calls != 1 || sess.Title != "new" || len(hist) != 0 || sess.CreatedAt.IsZero() {
		t.Errorf("missing session: created=%v, newSession called %d times, session %+v, %d messages", created, calls, sess, len(hist))
	}
	got, err := s.GetSession(ctx, missing)
	noErr(t, "GetSession of the created session", err)
	if got.Title != "new" {
		t.Errorf("created session %+v", got)
	}
	wantErr(t, "created session held by A", s.AcquireLease(ctx, missing, "B", time.Hour), store.ErrLeaseHeld)

	bobs := store.Key{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID}
	_, _, _, err = oc.OpenOrCreateTurn(ctx, bobs, "C", time.Hour, 0, newSession(bobs, nil))
	wantErr(t, "another user's thread id", err, store.ErrExists)
}

// testFinishTurn: FinishTurn appends, adds the statistics and releases the
// lease at once, or changes nothing.
func testFinishTurn(t *testing.T, s store.Store) {
	fin, ok := store.Capability[store.TurnFinisher](s)
	if !ok {
		t.Skip("the store has no FinishTurn")
	}
	ctx := t.Context()
	p := newProject()
	k, base := leasedWithQuestion(t, s, p, "A")

	// A message the store refuses: nothing is written, the lease stays.
	_, err := fin.FinishTurn(ctx, k, "A", []store.Message{textMsg("narrator", "x")}, store.TurnStats{Turns: 1, Messages: 1})
	if err == nil {
		t.Fatal("FinishTurn with an unknown role: no error")
	}
	if got := get(t, s, k); got.Stats.Turns != 0 || got.MessageCount != base {
		t.Errorf("a refused FinishTurn changed the counters: turns %d, messages %d", got.Stats.Turns, got.MessageCount)
	}
	wantErr(t, "AcquireLease(B) after a refused FinishTurn", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)

	answer := store.Message{Role: store.RoleAssistant, Content: "answer", CreatedAt: time.Now().UTC()}
	out, err := fin.FinishTurn(ctx, k, "A", []store.Message{answer},
		store.TurnStats{Turns: 1, Messages: 1, LLMCalls: 1, InputTokens: 10, OutputTokens: 4, LastMessageAt: answer.CreatedAt})
	checkAnswerFinished(t, s, k, base, answer, out, err)

	// No messages: statistics and release only. Another owner's FinishTurn
	// leaves B's lease alone.
	_, err = fin.FinishTurn(ctx, k, "A", nil, store.TurnStats{Turns: 1, Errors: 1})
	noErr(t, "FinishTurn(A) without messages", err)
	wantErr(t, "AcquireLease(C) while B holds it", s.AcquireLease(ctx, k, "C", time.Hour), store.ErrLeaseHeld)
	if got := get(t, s, k); got.Stats.Turns != 2 || got.Stats.Errors != 1 || len(listMsgs(t, s, k, 0)) != 2 {
		t.Errorf("after FinishTurn without messages: turns %d errors %d", got.Stats.Turns, got.Stats.Errors)
	}

	_, err = fin.FinishTurn(ctx, newKey(p, "alice"), "A", []store.Message{textMsg(store.RoleAssistant, "x")}, store.TurnStats{Turns: 1})
	wantErr(t, "FinishTurn(missing session)", err, store.ErrNotFound)
}

// testFinishTitledTurn: FinishTitledTurn ends the turn as FinishTurn does
// (with an answer or without) and sets the generated title in the same
// write, unless the user named the session; a missing session is
// store.ErrNotFound with nothing written.
func testFinishTitledTurn(t *testing.T, s store.Store) {
	tf, ok := store.Capability[store.TitledTurnFinisher](s)
	if !ok {
		t.Skip("the store has no FinishTitledTurn")
	}
	ctx := t.Context()
	p := newProject()
	tests := []struct {
		name      string
		userTitle string // set by the user before the end (empty: none)
		noAnswer  bool   // the answer was stored before (FinishTitledTurn without messages)
		missing   bool   // the session is deleted before the end
		wantTitle string
		wantErr   error
	}{
		{name: "default title", wantTitle: "Generated"},
		{name: "default title, no answer to store", noAnswer: true, wantTitle: "Generated"},
		{name: "named by the user", userTitle: "Mine", wantTitle: "Mine"},
		{name: "named by the user, no answer to store", noAnswer: true, userTitle: "Mine", wantTitle: "Mine"},
		{name: "deleted session", missing: true, wantErr: store.ErrNotFound},
	}
	for _, tc := range tests {
		k := newKey(p, "alice")
		noErr(t, tc.name+": CreateLeasedSession", s.CreateLeasedSession(ctx,
			&store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: store.DefaultTitle}, "owner", time.Hour))
		if _, err := s.AppendMessages(ctx, k, []store.Message{textMsg(store.RoleUser, "question")}); err != nil {
			t.Fatalf("%s: AppendMessages: %v", tc.name, err)
		}
		if tc.userTitle != "" {
			if _, err := s.RenameSession(ctx, k, tc.userTitle); err != nil {
				t.Fatalf("%s: RenameSession: %v", tc.name, err)
			}
		}
		if tc.missing {
			noErr(t, tc.name+": DeleteSession", s.DeleteSession(ctx, k))
		}
		var msgs []store.Message
		if !tc.noAnswer {
			msgs = []store.Message{{Role: store.RoleAssistant, Content: "answer", CreatedAt: time.Now().UTC()}}
		}
		out, err := tf.FinishTitledTurn(ctx, k, "owner", msgs, store.TurnStats{Turns: 1, Messages: int64(len(msgs)) + 1}, "Generated")
		if tc.wantErr != nil {
			wantErr(t, tc.name, err, tc.wantErr)
			continue
		}
		noErr(t, tc.name, err)
		if len(out) != len(msgs) {
			t.Errorf("%s: appended %d messages, want %d", tc.name, len(out), len(msgs))
		}
		sess := get(t, s, k)
		if sess.Title != tc.wantTitle || sess.Stats.Turns != 1 || sess.MessageCount != int64(len(msgs))+1 {
			t.Errorf("%s: title %q, turns %d, messages %d; want %q, 1, %d", tc.name, sess.Title, sess.Stats.Turns, sess.MessageCount, tc.wantTitle, len(msgs)+1)
		}
		if hist := listMsgs(t, s, k, 0); len(hist) != len(msgs)+1 {
			t.Errorf("%s: %d messages stored, want %d", tc.name, len(hist), len(msgs)+1)
		}
		noErr(t, tc.name+": AcquireLease after the end", s.AcquireLease(ctx, k, "next", time.Hour))
	}
}
