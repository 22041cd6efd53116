package agent

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// stepStore is the harness's SQLite store (with its one-step calls,
// store.TurnOpener, store.TurnOpenCreator and store.TurnFinisher)
// recording the calls a turn makes; finishErr makes FinishTurn fail.
type stepStore struct {
	*sqlite.Store
	mu        sync.Mutex
	calls     []string
	finishErr error
}

func (s *stepStore) record(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
}

// took returns the recorded calls, sorted, and forgets them.
func (s *stepStore) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Sorted(slices.Values(s.calls))
	s.calls = nil
	return out
}

func (s *stepStore) OpenTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, limit int) (*store.Session, []store.Message, error) {
	s.record("OpenTurn")
	return s.Store.OpenTurn(ctx, k, owner, ttl, limit)
}

func (s *stepStore) OpenOrCreateTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, limit int,
	newSession func() (*store.Session, error)) (*store.Session, []store.Message, bool, error) {
	s.record("OpenOrCreateTurn")
	return s.Store.OpenOrCreateTurn(ctx, k, owner, ttl, limit, newSession)
}

func (s *stepStore) FinishTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats) ([]store.Message, error) {
	s.record("FinishTurn")
	if s.finishErr != nil {
		return nil, s.finishErr
	}
	return s.Store.FinishTurn(ctx, k, owner, msgs, d)
}

func (s *stepStore) FinishTitledTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats, title string) ([]store.Message, error) {
	s.record("FinishTitledTurn")
	if s.finishErr != nil {
		return nil, s.finishErr
	}
	return s.Store.FinishTitledTurn(ctx, k, owner, msgs, d, title)
}

func (s *stepStore) SetGeneratedTitle(ctx context.Context, k store.Key, title string) (bool, error) {
	s.record("SetGeneratedTitle")
	return s.Store.SetGeneratedTitle(ctx, k, title)
}

func (s *stepStore) CreateSeededSession(ctx context.Context, sess *store.Session, owner string, ttl time.Duration, msgs []store.Message) ([]store.Message, error) {
	s.record("CreateSeededSession")
	return s.Store.CreateSeededSession(ctx, sess, owner, ttl, msgs)
}

func (s *stepStore) CreateLeasedSession(ctx context.Context, sess *store.Session, owner string, ttl time.Duration) error {
	s.record("CreateLeasedSession")
	return s.Store.CreateLeasedSession(ctx, sess, owner, ttl)
}

func (s *stepStore) GetSession(ctx context.Context, k store.Key) (*store.Session, error) {
	s.record("GetSession")
	return s.Store.GetSession(ctx, k)
}

func (s *stepStore) AcquireLease(ctx context.Context, k store.Key, owner string, ttl time.Duration) error {
	s.record("AcquireLease")
	return s.Store.AcquireLease(ctx, k, owner, ttl)
}

func (s *stepStore) ListMessages(ctx context.Context, k store.Key, limit int) ([]store.Message, error) {
	s.record("ListMessages")
	return s.Store.ListMessages(ctx, k, limit)
}

func (s *stepStore) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	s.record("AppendMessages")
	return s.Store.AppendMessages(ctx, k, msgs)
}

func (s *stepStore) AddTurnStats(ctx context.Context, k store.Key, d store.TurnStats) error {
	s.record("AddTurnStats")
	return s.Store.AddTurnStats(ctx, k, d)
}

func (s *stepStore) ReleaseLease(ctx context.Context, k store.Key, owner string) error {
	s.record("ReleaseLease")
	return s.Store.ReleaseLease(ctx, k, owner)
}

// On a store with the one-step calls, a turn on an existing session opens
// with one call (lease, session and history), stores the user message
// beside the LLM call and ends with one call (answer, statistics, release);
// a turn that makes the session's title stores its answer before the
// title's LLM call and the title in the call that ends it; a failed end
// reports the answer unsaved and still frees the session (and still
// stores a title to make).
func TestOneStepTurn(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		title     string // the session's title before the turn (empty: default)
		finishErr error
		wantCalls []string
		wantError string // the turn's error event
		wantSaved bool   // the answer is in the history afterwards
		wantTitle string // the session's title afterwards
	}{
		{name: "titled session", title: "Lab work",
			wantCalls: []string{"AppendMessages", "FinishTurn", "OpenOrCreateTurn"}, wantSaved: true, wantTitle: "Lab work"},
		{name: "title to make",
			wantCalls: []string{"AppendMessages", "AppendMessages", "FinishTitledTurn", "OpenOrCreateTurn"}, wantSaved: true, wantTitle: "A title"},
		{name: "the end fails", title: "Lab work", finishErr: errors.New("disk full"),
			wantCalls: []string{"AddTurnStats", "AppendMessages", "FinishTurn", "OpenOrCreateTurn", "ReleaseLease"},
			wantError: saveFailedText, wantTitle: "Lab work"},
		{name: "the end fails with a title to make", finishErr: errors.New("disk full"),
			wantCalls: []string{"AddTurnStats", "AppendMessages", "AppendMessages", "FinishTitledTurn", "FinishTurn", "OpenOrCreateTurn", "ReleaseLease", "SetGeneratedTitle"},
			wantSaved: true, wantTitle: "A title"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			st := &stepStore{Store: h.st}
			h.rt.o.Store = st
			k := newKey()
			noErrT(t, h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: tc.title}))
			_, err := h.st.AppendMessages(ctx, k, []store.Message{
				{Role: store.RoleUser, Content: "earlier question"}, {Role: store.RoleAssistant, Content: "earlier answer"},
			})
			noErrT(t, err)
			if tc.title != "" {
				_, err := h.st.RenameSession(ctx, k, tc.title)
				noErrT(t, err)
			}
			st.finishErr = tc.finishErr
			h.llm.Enqueue(llmtest.Reply{Text: "The answer."}, llmtest.Reply{Text: "A title"})

			ev := h.turn(k, "next question")

			if got := st.took(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("store calls %v, want %v", got, tc.wantCalls)
			}
			var errText string
			for _, e := range ev {
				if e.Type == EventError {
					errText = e.Error
				}
			}
			if errText != tc.wantError {
				t.Errorf("error event %q, want %q", errText, tc.wantError)
			}
			reqs := h.llm.Requests()
			if len(reqs) == 0 || !slices.ContainsFunc(reqs[0].Messages, func(m openai.ChatCompletionMessage) bool { return m.Content == "earlier answer" }) {
				t.Errorf("the LLM request lacks the history read with the lease: %+v", reqs)
			}
			msgs := h.messages(k)
			saved := slices.ContainsFunc(msgs, func(m store.Message) bool { return m.Content == "The answer." })
			if saved != tc.wantSaved {
				t.Errorf("answer saved = %v, want %v (history %+v)", saved, tc.wantSaved, msgs)
			}
			sess, err := h.st.GetSession(ctx, k)
			noErrT(t, err)
			if sess.Stats.Turns != 1 {
				t.Errorf("turns = %d, want 1", sess.Stats.Turns)
			}
			if sess.Title != tc.wantTitle {
				t.Errorf("title = %q, want %q", sess.Title, tc.wantTitle)
			}
			if tc.wantError != "" && sess.Stats.Errors != 1 {
				t.Errorf("errors = %d, want 1", sess.Stats.Errors)
			}
			// The session is free again.
			if err := h.st.AcquireLease(ctx, k, "next-turn", time.Minute); err != nil {
				t.Errorf("lease after the turn: %v", err)
			}
			if err := h.st.ReleaseLease(ctx, k, "next-turn"); err != nil {
				t.Fatal(err)
			}
			// The message count matches the stored messages.
			if _, _, err := h.st.OpenTurn(ctx, k, "check", time.Minute, 0); err != nil {
				t.Fatal(err)
			}
			if sess, err = h.st.GetSession(ctx, k); err != nil || sess.MessageCount != int64(len(h.messages(k))) {
				t.Errorf("message count %d, stored %d (%v)", sess.MessageCount, len(h.messages(k)), err)
			}
		})
	}
}

func noErrT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// On a store that creates a session with its first messages
// (store.SeededSessionCreator), a new session's turn (its id made by the
// server) stores its user message in the session's write: the other
// writes are the answer's (before the title's LLM call) and the end's. The
// history, the statistics and the message count are those of a turn
// without it.
func TestNewSessionSeededWithUserMessage(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	st := &stepStore{Store: h.st}
	h.rt.o.Store = st
	h.llm.Enqueue(llmtest.Reply{Text: "The answer."}, llmtest.Reply{Text: "A title"})
	tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: store.Key{ProjectID: "project-1", UserID: "user-1"}, AgentID: "tester", Message: "first question"})
	if err != nil {
		t.Fatalf("start turn: %v", err)
	}
	var ev events
	tr.Run(ctx, func(e Event) { ev = append(ev, e) })
	checkEnd(t, ev, false)
	want := []string{"AppendMessages", "CreateSeededSession", "FinishTitledTurn"}
	if got := st.took(); !slices.Equal(got, want) {
		t.Errorf("store calls %v, want %v", got, want)
	}
	k := tr.Session().Key()
	msgs := h.messages(k)
	if len(msgs) != 2 || msgs[0].Role != store.RoleUser || msgs[0].Content != "first question" || msgs[1].Content != "The answer." {
		t.Fatalf("history %+v, want the question then the answer", msgs)
	}
	if msgs[0].Metadata[store.MetadataTurnID] != tr.ID() {
		t.Errorf("user message turn id %v, want %s", msgs[0].Metadata[store.MetadataTurnID], tr.ID())
	}
	sess := h.session(k)
	if sess.MessageCount != 2 || sess.Stats.Turns != 1 || sess.Title != "A title" {
		t.Errorf("session: %d messages, %d turns, title %q; want 2, 1, \"A title\"", sess.MessageCount, sess.Stats.Turns, sess.Title)
	}
}
