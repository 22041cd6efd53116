package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/store"
)

// Sizes of testDeleteRecreateRace: rounds of the race, messages of the
// session deleted, appends of the session created again (of
// raceBatchSize messages each).
const (
	raceRounds    = 8
	raceOldMsgs   = 24
	raceNewBatch  = 4
	raceBatchSize = 3
)

// testDeleteRecreateRace loops a race of two deletions of one session with
// its creation again under the same thread id and appends to the new
// session. The second deletion starts later from round to round, spread
// over the time one deletion takes, so that it meets the first one and
// the new session at every stage. Whatever the interleaving, the new
// session, when it stands at the end, has every message it committed and
// nothing of the old one; a deletion that started after the new session
// existed may remove it, but then as a whole.
func testDeleteRecreateRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	large := strings.Repeat("x", 400<<10) // stored in parts where a store has parts
	oldMsgs := func(k store.Key) {
		var msgs []store.Message
		for i := range raceOldMsgs {
			content := fmt.Sprintf("old-%d", i+1)
			if i == raceOldMsgs/2 {
				content += large
			}
			msgs = append(msgs, textMsg([]string{store.RoleUser, store.RoleAssistant}[i%2], content))
		}
		appendMsgs(t, s, k, msgs[:raceOldMsgs/2]...)
		appendMsgs(t, s, k, msgs[raceOldMsgs/2:]...)
	}

	// How long one deletion takes here, to spread the second one over.
	k := newKey(p, "alice")
	create(t, s, k, nil)
	oldMsgs(k)
	began := time.Now()
	noErr(t, "DeleteSession", s.DeleteSession(ctx, k))
	span := time.Since(began)

	for round := range raceRounds {
		k := newKey(p, "alice")
		create(t, s, k, func(s *store.Session) { s.Title = "old" })
		oldMsgs(k)

		var (
			wg        sync.WaitGroup
			delErrs   [2]error
			createErr error
			appendErr error
			committed []store.Message // what the new session committed
		)
		start := make(chan struct{})
		for i := range delErrs {
			delay := time.Duration(i) * span * time.Duration(round) / raceRounds
			wg.Go(func() {
				<-start
				time.Sleep(delay)
				delErrs[i] = s.DeleteSession(ctx, k)
			})
		}
		wg.Go(func() {
			<-start
			// Create the session again as soon as the old one is gone.
			deadline := time.Now().Add(30 * time.Second)
			for {
				createErr = s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "new"})
				if !errors.Is(createErr, store.ErrExists) || time.Now().After(deadline) {
					break
				}
			}
			if createErr != nil {
				return
			}
			for b := range raceNewBatch {
				var msgs []store.Message
				for i := range raceBatchSize {
					msgs = append(msgs, textMsg(store.RoleUser, fmt.Sprintf("new-%d", b*raceBatchSize+i+1)))
				}
				got, err := s.AppendMessages(ctx, k, msgs)
				if err != nil {
					// A deletion that started after the new session existed
					// removed it: nothing more to commit.
					appendErr = err
					return
				}
				committed = append(committed, got...)
			}
		})
		close(start)
		wg.Wait()

		what := fmt.Sprintf("round %d", round)
		for i, err := range delErrs {
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s: DeleteSession %d: %v", what, i+1, err)
			}
		}
		if createErr != nil {
			t.Fatalf("%s: CreateSession again: %v", what, createErr)
		}
		if appendErr != nil && !errors.Is(appendErr, store.ErrNotFound) {
			t.Fatalf("%s: AppendMessages to the new session: %v", what, appendErr)
		}

		sess, err := s.GetSession(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			// Removed as a whole by the later deletion.
			_, err := s.ListMessages(ctx, k, 0)
			wantErr(t, what+": ListMessages of the removed new session", err, store.ErrNotFound)
			continue
		}
		noErr(t, what+": GetSession of the new session", err)
		if sess.Title != "new" {
			t.Errorf("%s: the session standing is titled %q, want the new session", what, sess.Title)
		}
		if appendErr != nil {
			t.Errorf("%s: an append failed (%v) but the new session stands", what, appendErr)
		}
		got, err := s.ListMessages(ctx, k, 0)
		if err != nil {
			t.Fatalf("%s: ListMessages of the new session: %v", what, err)
		}
		if len(got) != len(committed) {
			t.Fatalf("%s: the new session lists %d messages %q, want the %d it committed", what, len(got), shortContents(got), len(committed))
		}
		for i := range got {
			if got[i].ID != committed[i].ID || got[i].Seq != committed[i].Seq || got[i].Content != committed[i].Content {
				t.Errorf("%s: message %d is seq %d %q, want seq %d %q", what, i, got[i].Seq, got[i].Content, committed[i].Seq, committed[i].Content)
			}
		}
		noErr(t, what+": DeleteSession of the new session", s.DeleteSession(ctx, k))
	}
}

// shortContents is the start of each message's content.
func shortContents(msgs []store.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content[:min(len(m.Content), 12)]
	}
	return out
}
