package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

// CreateSeededSession creates the session with its lease and its first
// messages in one write; a taken id or a user at the sessions limit gets
// the error of CreateLeasedSession, with nothing written.
func TestCreateSeededSession(t *testing.T) {
	ctx := context.Background()
	k := store.Key{ProjectID: "p", UserID: "u", ThreadID: "t"}
	tests := []struct {
		name    string
		before  []store.Key // sessions created first
		wantErr error       // errors.Is target; nil: success
		limit   bool        // wantErr is a *store.LimitError
	}{
		{name: "new session"},
		{name: "id taken", before: []store.Key{k}, wantErr: store.ErrExists},
		{name: "at the limit", before: []store.Key{{ProjectID: "p", UserID: "u", ThreadID: "other"}}, limit: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t, WithLimits(store.Limits{SessionsPerUser: 1}))
			for _, b := range tc.before {
				if err := s.CreateSession(ctx, &store.Session{ProjectID: b.ProjectID, UserID: b.UserID, ThreadID: b.ThreadID, Title: "before"}); err != nil {
					t.Fatal(err)
				}
			}
			msgs := []store.Message{{ID: "m1", Role: store.RoleUser, Content: "hello", CreatedAt: time.Now().UTC()}}
			out, err := s.CreateSeededSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: store.DefaultTitle}, "owner", time.Minute, msgs)
			var le *store.LimitError
			switch {
			case tc.limit:
				if !errors.As(err, &le) {
					t.Fatalf("CreateSeededSession = %v, want a *store.LimitError", err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("CreateSeededSession = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("CreateSeededSession: %v", err)
			}
			stored, lerr := s.ListMessages(ctx, k, 0)
			if tc.wantErr != nil || tc.limit {
				if len(stored) != 0 {
					t.Errorf("messages after a refused creation: %+v", stored)
				}
				return
			}
			if lerr != nil || len(out) != 1 || out[0].Seq != 1 || len(stored) != 1 || stored[0].ID != "m1" {
				t.Fatalf("appended %+v, stored %+v (%v), want m1 at seq 1", out, stored, lerr)
			}
			// The lease is the owner's.
			var held *store.LeaseHeldError
			if err := s.AcquireLease(ctx, k, "another", time.Minute); !errors.As(err, &held) || held.Owner != "owner" {
				t.Errorf("AcquireLease by another owner = %v, want held by owner", err)
			}
		})
	}
}
