package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

// FinishTitledTurn ends the turn as FinishTurn does and sets the generated
// title in the same write, unless the user named the session; a missing
// session is store.ErrNotFound with nothing written.
func TestFinishTitledTurn(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		userTitle string // set by the user before the turn (empty: none)
		missing   bool   // the session is deleted before the end
		wantTitle string
		wantErr   error
	}{
		{name: "default title", wantTitle: "Generated"},
		{name: "named by the user", userTitle: "Mine", wantTitle: "Mine"},
		{name: "deleted session", missing: true, wantErr: store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t)
			k := store.Key{ProjectID: "p", UserID: "u", ThreadID: "t"}
			if err := s.CreateLeasedSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: store.DefaultTitle}, "owner", time.Minute); err != nil {
				t.Fatal(err)
			}
			if tc.userTitle != "" {
				if _, err := s.RenameSession(ctx, k, tc.userTitle); err != nil {
					t.Fatal(err)
				}
			}
			if tc.missing {
				if err := s.DeleteSession(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			msgs := []store.Message{{Role: store.RoleAssistant, Content: "answer", CreatedAt: time.Now().UTC()}}
			out, err := s.FinishTitledTurn(ctx, k, "owner", msgs, store.TurnStats{Turns: 1, Messages: 1, LastMessageAt: msgs[0].CreatedAt}, "Generated")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("FinishTitledTurn = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			if len(out) != 1 {
				t.Errorf("appended %d messages, want 1", len(out))
			}
			sess, err := s.GetSession(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Title != tc.wantTitle || sess.Stats.Turns != 1 {
				t.Errorf("session title %q, turns %d; want %q, 1", sess.Title, sess.Stats.Turns, tc.wantTitle)
			}
			// The lease was released.
			if err := s.AcquireLease(ctx, k, "next", time.Minute); err != nil {
				t.Errorf("lease after the end: %v", err)
			}
		})
	}
}
